/* The tool launcher of onnx_mlir_py/tool_launcher.py.
 *
 *   om-tool-launch <parent pid> <tool path> [args...]
 *
 * Sets PR_SET_PDEATHSIG = SIGKILL (the tool dies with the compiler thread
 * that started it), exits at once if that parent is already gone, then
 * execs the tool in its place (same pid, same process group). The compiler
 * starts it with vfork (no Python pre-exec step), which costs ~1 ms where a
 * fork of a compiler holding a model's weights costs 30-120 ms (#29). */
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 3)
        return 127;
    long parent = strtol(argv[1], NULL, 10);
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0)
        return 126;
    if ((long)getppid() != parent)
        _exit(128 + SIGKILL);
    execv(argv[2], argv + 2);
    return 127;
}
