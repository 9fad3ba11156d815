/* fork_server.c - the ppqfmt command line, run many times without exec.
 *
 * scripts/fuzz_diff.py formats every random model several times (the default
 * passes, --passes=none, random pass subsets and options, each output again):
 * on a sandboxed machine an exec costs ~20 ms, more than formatting a small
 * model, while a fork of this small process costs a few. So this program links
 * the command line (cli/main.c compiled with main renamed ppqfmt_cli_main, see
 * the Makefile) and runs it in a forked child per request: each run starts from
 * the same fresh state, and a crash or hang kills only that child. The Makefile
 * links it statically when it can: the child then takes fewer page faults.
 *
 *   build/tools/fork_server   < requests > replies
 * Request: one line, fields separated by tabs: the file that receives the
 * run's stderr, then ppqfmt's arguments (no argv[0]). Reply: one line,
 * "exit N", "signal N" (SIGALRM: the run took more than FORK_SERVER_SECONDS) or
 * "failed" (no child could be started).
 * The child's stdin and stdout are /dev/null: requests must name an output file.
 * Ends at the end of its input. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int ppqfmt_cli_main(int argc, char **argv);

enum { FORK_SERVER_MAX_ARGS = 256, FORK_SERVER_SECONDS = 60 };

/* Splits line (its newline removed) at tabs into argv after argv[0]; argc. */
static int fork_server_split(char *line, char **argv)
{
    int argc = 0;
    line[strcspn(line, "\n")] = '\0';
    argv[argc++] = "ppqfmt";
    for (char *f = strtok(line, "\t"); f && argc < FORK_SERVER_MAX_ARGS; f = strtok(NULL, "\t"))
        argv[argc++] = f;
    argv[argc] = NULL;
    return argc;
}

/* argv: {"ppqfmt", stderr file, arguments...} */
static void fork_server_child(int argc, char **argv)
{
    const char *err_path = argv[1];
    argv[1] = argv[0];
    int err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int null = open("/dev/null", O_RDWR);
    if (err < 0 || null < 0 || dup2(err, STDERR_FILENO) < 0 ||
        dup2(null, STDIN_FILENO) < 0 || dup2(null, STDOUT_FILENO) < 0)
        _exit(127);
    alarm(FORK_SERVER_SECONDS);
    exit(ppqfmt_cli_main(argc - 1, argv + 1)); /* exit: flush stdio as the real main's return does */
}

static void fork_server_reply(pid_t pid)
{
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) < 0)
        printf("failed\n");
    else if (WIFEXITED(st))
        printf("exit %d\n", WEXITSTATUS(st));
    else
        printf("signal %d\n", WIFSIGNALED(st) ? WTERMSIG(st) : 0);
    fflush(stdout);
}

int main(void)
{
    static char line[1 << 16];
    char *argv[FORK_SERVER_MAX_ARGS + 1];
    while (fgets(line, sizeof line, stdin)) {
        int argc = fork_server_split(line, argv);
        if (argc < 2) {
            printf("exit 127\n");
            fflush(stdout);
            continue;
        }
        fflush(stdout); /* the child must not inherit unwritten replies */
        pid_t pid = fork();
        if (pid == 0)
            fork_server_child(argc, argv);
        fork_server_reply(pid);
    }
    return 0;
}
