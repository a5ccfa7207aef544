#ifndef GATEHOUSE_CSQLITE_SHIM_H
#define GATEHOUSE_CSQLITE_SHIM_H
#include <sqlite3.h>

/* SQLITE_TRANSIENT is a macro casting -1 to a function pointer; Swift cannot import it. */
static inline sqlite3_destructor_type gatehouse_sqlite_transient(void) { return SQLITE_TRANSIENT; }
/* sqlite3_config is variadic, which Swift cannot call. Memory statistics cost a global mutex on every
   allocation, shared by all connections of the process; Gatehouse never reads them. Effective only before
   SQLite initialises (the first connection opened); later it returns SQLITE_MISUSE and changes nothing. */
static inline int gatehouse_sqlite_disable_memstatus(void) { return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0); }
#endif
