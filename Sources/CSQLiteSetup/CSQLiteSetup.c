#include "CSQLiteSetup.h"
#include <sqlite3.h>

// sqlite3_config is variadic, which Swift cannot call: this is the one C function around it.
int fencepost_sqlite_setup(void) {
    int result = sqlite3_config(SQLITE_CONFIG_MULTITHREAD);
    if (result != SQLITE_OK) return result;
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}
