/* eval_regex.c - RE2 patterns as POSIX extended regular expressions
 * (eval_regex.h).
 *
 * Whether a whole string matches depends only on the language a pattern
 * describes, not on how the engine picks among matches (RE2's leftmost-first,
 * POSIX's leftmost-longest), nor on greedy or lazy repetition; so a pattern
 * made only of constructs both syntaxes give the same meaning gives the same
 * verdict. The caller feeds ASCII strings without newlines (where RE2's `.`
 * and POSIX's agree, and a byte is a character). The translation spells out
 * RE2's Perl classes (\w, \d, \s) in POSIX classes, keeps escaped
 * metacharacters escaped and other escaped punctuation literal, turns `(?:`
 * into a plain group, and inside brackets moves an escaped `-` or `^` to
 * where POSIX reads it literally. Anything else RE2 reads its own way
 * (flags, \pN, \x41, \Q..\E, \A, \z, back references, `{` not opening a
 * repetition, `[=`, `[.`) is refused. */
#include "eval_regex.h"

#include <ctype.h>
#include <string.h>

typedef struct RegexOut {
    char *buf;
    size_t len, cap;
    bool ok;
} RegexOut;

static void put(RegexOut *o, const char *s)
{
    size_t n = strlen(s);
    if (o->len + n + 1 > o->cap) {
        o->ok = false;
        return;
    }
    memcpy(o->buf + o->len, s, n + 1);
    o->len += n;
}

static void put_char(RegexOut *o, char ch)
{
    char s[2] = {ch, 0};
    put(o, s);
}

/* The POSIX bracket items for Perl class letter k (inside brackets), or NULL. */
static const char *perl_class(char k)
{
    switch (k) {
    case 'w': return "[:alnum:]_";
    case 'd': return "[:digit:]";
    case 's': return " \t\n\f\r"; /* RE2's \s has no \v, [:space:] has */
    default: return NULL;
    }
}

/* The literal an escape \k stands for in RE2 (0: none of these). */
static char escaped_control(char k)
{
    switch (k) {
    case 'n': return '\n';
    case 't': return '\t';
    case 'r': return '\r';
    case 'f': return '\f';
    case 'v': return '\v';
    case 'a': return '\a';
    default: return 0;
    }
}

/* A bracket expression starting after its '['; *i advances past its ']'. */
static void bracket(const char *re, size_t n, size_t *i, RegexOut *o)
{
    bool dash = false, caret = false, any = false;
    put_char(o, '[');
    if (*i < n && re[*i] == '^') {
        put_char(o, '^');
        (*i)++;
    }
    if (*i < n && re[*i] == ']') { /* RE2 and POSIX disagree on a leading ']' */
        o->ok = false;
        return;
    }
    for (; *i < n && re[*i] != ']'; (*i)++) {
        char ch = re[*i];
        if (ch == '[' && *i + 1 < n && (re[*i + 1] == '=' || re[*i + 1] == '.')) {
            o->ok = false;
            return;
        }
        if (ch == '[' && *i + 1 < n && re[*i + 1] == ':') { /* [:alpha:] alike in both */
            const char *end = strstr(re + *i, ":]");
            if (!end || (size_t)(end - re) >= n) {
                o->ok = false;
                return;
            }
            for (; re + *i < end + 2; (*i)++)
                put_char(o, re[*i]);
            (*i)--;
            any = true;
            continue;
        }
        if (ch != '\\') {
            put_char(o, ch);
            any = true;
            continue;
        }
        if (++*i >= n) {
            o->ok = false;
            return;
        }
        char k = re[*i];
        const char *cls = perl_class(k);
        if (cls)
            put(o, cls);
        else if (escaped_control(k))
            put_char(o, escaped_control(k));
        else if (k == '-' || k == '^')
            *(k == '-' ? &dash : &caret) = true;
        else if (ispunct((unsigned char)k) && k != ']' && k != '[')
            put_char(o, k); /* a backslash is literal in a POSIX bracket: \\ too */
        else {
            o->ok = false;
            return;
        }
        any = any || cls || k != '-';
    }
    if (*i >= n || (!any && caret)) {
        o->ok = false;
        return;
    }
    if (caret)
        put_char(o, '^');
    if (dash)
        put_char(o, '-');
    put_char(o, ']');
}

/* An escape outside brackets: re[*i] is the letter after the backslash. */
static void escape(char k, RegexOut *o)
{
    static const char meta[] = ".*+?()[]{}|^$\\";
    const char *cls = perl_class(k);
    if (cls && k == 's')
        put(o, "[ \t\n\f\r]");
    else if (cls) {
        put_char(o, '[');
        put(o, cls);
        put_char(o, ']');
    } else if (k == 'W')
        put(o, "[^[:alnum:]_]");
    else if (k == 'D')
        put(o, "[^[:digit:]]");
    else if (k == 'b' || k == 'B') /* glibc's word boundary: ASCII words in the C locale */
        put(o, k == 'b' ? "\\b" : "\\B");
    else if (escaped_control(k))
        put_char(o, escaped_control(k));
    else if (k && strchr(meta, k)) {
        put_char(o, '\\');
        put_char(o, k);
    } else if (ispunct((unsigned char)k))
        put_char(o, k);
    else
        o->ok = false;
}

/* `{m}`, `{m,}` or `{m,n}` at re[i]: its length, 0 when it is not one. */
static size_t repetition(const char *re, size_t n, size_t i)
{
    size_t j = i + 1, digits = 0;
    while (j < n && isdigit((unsigned char)re[j]))
        j++, digits++;
    if (!digits)
        return 0;
    if (j < n && re[j] == ',')
        for (j++; j < n && isdigit((unsigned char)re[j]);)
            j++;
    return j < n && re[j] == '}' ? j + 1 - i : 0;
}

/* What the last token was: a repetition may follow only an atom, and a lazy
 * `?` only a repetition. */
typedef enum { TOK_NONE, TOK_ATOM, TOK_REPEAT, TOK_LAZY } RegexTok;

/* One token at re[*i] (advanced past it); the kind it was. */
static RegexTok token(const char *re, size_t n, size_t *i, RegexTok prev, RegexOut *o)
{
    char ch = re[*i];
    bool repeat = ch == '*' || ch == '+' || ch == '?' || ch == '{';
    if (repeat && prev == TOK_REPEAT && ch == '?')
        return TOK_LAZY; /* lazy: the same strings match */
    if (repeat && prev != TOK_ATOM) { /* RE2 refuses, POSIX may read a literal */
        o->ok = false;
        return TOK_NONE;
    }
    if ((unsigned char)ch >= 0x80 || ch == 0)
        o->ok = false;
    else if (ch == '\\') {
        char k = ++*i < n ? re[*i] : 0;
        escape(k, o);
        return k == 'b' || k == 'B' ? TOK_NONE : TOK_ATOM;
    } else if (ch == '[') {
        (*i)++;
        bracket(re, n, i, o);
    } else if (ch == '(' && *i + 1 < n && re[*i + 1] == '?') {
        o->ok = *i + 2 < n && re[*i + 2] == ':';
        put_char(o, '(');
        *i += 2;
        return TOK_NONE;
    } else if (ch == '{') {
        size_t len = repetition(re, n, *i);
        o->ok = len > 0;
        for (size_t k = 0; k < len && o->ok; k++)
            put_char(o, re[*i + k]);
        *i += len ? len - 1 : 0;
        return TOK_REPEAT;
    } else {
        put_char(o, ch);
        return repeat ? TOK_REPEAT : ch == '(' || ch == '|' || ch == '^' || ch == '$' ? TOK_NONE
                                                                                  : TOK_ATOM;
    }
    return TOK_ATOM;
}

bool eval_regex_to_ere(const char *re, size_t n, char *out, size_t cap)
{
    RegexOut o = {out, 0, cap, true};
    RegexTok prev = TOK_NONE;
    put(&o, "^(");
    for (size_t i = 0; i < n && o.ok; i++)
        prev = token(re, n, &i, prev, &o);
    put(&o, ")$");
    return o.ok;
}
