#ifndef FENCEPOST_CSQLITESETUP_H
#define FENCEPOST_CSQLITESETUP_H

/// Puts SQLite in multi-thread mode (no mutex around each connection's and statement's calls:
/// GRDB already gives a connection one user at a time) without memory statistics (a global
/// mutex around every allocation). Must run before SQLite initialises, that is before the
/// first connection opens; returns SQLite's result code (SQLITE_MISUSE when it was too late,
/// which leaves SQLite as it was).
int fencepost_sqlite_setup(void);

#endif
