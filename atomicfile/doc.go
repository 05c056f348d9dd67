// Package atomicfile writes files so that a reader never sees a partial
// one and a failed, interrupted or killed writer leaves nothing behind.
//
// Write builds the new content in a file with no name in the target's
// directory (Linux's O_TMPFILE) and links it into place only once it is
// complete and synced: a process killed while writing, even with SIGKILL,
// leaves no trace, because the kernel frees an unnamed file when its last
// descriptor closes. An existing target is replaced atomically by linking
// the file under a temporary name and renaming that over the target.
// Where the filesystem or the system has no unnamed files, Write falls back
// to a named temporary file beside the target (".NAME.RANDOM.tmp"), removed
// on every failure Write sees, but left behind by a SIGKILL.
//
// Every file gpuscatter writes (the run output, the inputs the examples
// command writes, bench --json and --plot) goes through Write.
package atomicfile
