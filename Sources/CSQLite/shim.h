#ifndef BEACON_GATEWAY_CSQLITE_SHIM_H
#define BEACON_GATEWAY_CSQLITE_SHIM_H
#include <sqlite3.h>

// SQLITE_TRANSIENT is a cast macro Swift cannot import: bind calls copy their data.
static inline sqlite3_destructor_type csqlite_transient(void) { return SQLITE_TRANSIENT; }
#endif
