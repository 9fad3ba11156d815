/* graph_opset.c - the model's opset imports: the version a domain is
 * imported at, and raising one (the model's or a model-local function's). */
#include "graph.h"

#include <string.h>

static bool domain_is_default(const char *d)
{
    return !d || !*d || strcmp(d, "ai.onnx") == 0;
}

/* Does the opset import of domain d name `domain` ("" and "ai.onnx" alike)? */
static bool opset_names(const char *d, const char *domain)
{
    return domain_is_default(domain) ? domain_is_default(d) : strcmp(d, domain) == 0;
}

int64_t opsets_version(const Opset *opsets, size_t n, const char *domain)
{
    for (size_t i = 0; i < n; i++)
        if (opset_names(opsets[i].domain, domain))
            return opsets[i].version;
    return 0;
}

int64_t model_domain_opset(const Model *m, const char *domain)
{
    return opsets_version(m->opsets, m->n_opsets, domain);
}

int64_t model_opset(const Model *m)
{
    return model_domain_opset(m, "");
}

void model_functions_follow_opset(Model *m, int64_t from, int64_t to, const char *action)
{
    for (size_t i = 0; i < m->n_functions; i++) {
        ModelFunction *f = &m->functions[i];
        int64_t version = opsets_version(f->opsets, f->n_opsets, "");
        if (!version || (to > from ? version >= to : version <= to))
            continue;
        for (size_t j = 0; j < f->n_opsets; j++)
            if (domain_is_default(f->opsets[j].domain))
                f->opsets[j].version = to;
        f->changed = m->changed = true;
        model_note(m, action, f->name);
    }
}

int model_set_opset(Model *m, const char *domain, int64_t version, int64_t min_ir)
{
    bool found = false;
    for (size_t i = 0; i < m->n_opsets; i++) {
        if (opset_names(m->opsets[i].domain, domain)) {
            m->opsets[i].version = version;
            found = true;
        }
    }
    if (!found) {
        Opset *grown = arena_array(&m->arena, m->n_opsets + 1, sizeof *grown);
        const char *name = model_intern(m, domain);
        if (!grown || !name)
            return -1;
        if (m->n_opsets)
            memcpy(grown, m->opsets, m->n_opsets * sizeof *grown);
        grown[m->n_opsets++] = (Opset){name, version};
        m->opsets = grown;
    }
    if (m->ir_version < min_ir)
        m->ir_version = min_ir;
    m->changed = true;
    return 0;
}
