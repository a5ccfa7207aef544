// Process settings Swift cannot call directly: prctl is variadic.
#include <sys/prctl.h>

/// Marks the process not dumpable: no core file, and no other process of the same user may ptrace it or read its
/// /proc files (environ, mem), which may hold the master key, a store password or an API token. 0 on success.
static inline int gatehouse_process_set_undumpable(void) {
    return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}
