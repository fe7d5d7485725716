#include <sqlite3.h>
// SQLITE_TRANSIENT is a cast of -1 to a function pointer, which does not import into Swift: SQLite copies the bytes.
static inline int cohost_sqlite3_bind_text(sqlite3_stmt *s, int i, const char *text, int n) {
    return sqlite3_bind_text(s, i, text, n, SQLITE_TRANSIENT);
}
static inline int cohost_sqlite3_bind_blob(sqlite3_stmt *s, int i, const void *bytes, int n) {
    return sqlite3_bind_blob(s, i, bytes, n, SQLITE_TRANSIENT);
}
