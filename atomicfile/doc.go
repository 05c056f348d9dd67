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
// Write decides what to do from what the path names, as cp would: a
// symbolic link is followed and its final target replaced, the link left
// as it was; a FIFO or a device (a pipe, /dev/stdout, /dev/null) is
// written in place, since replacing it with a regular file would cut its
// reader off or, for root, destroy a device node; a directory, a file the
// user may not write and a folder the user may not create files in are
// errors. Check runs the same tests without writing, so that a command can
// refuse a bad output path before its work rather than after.
//
// Every file gpuscatter writes (the run output, the inputs the examples
// command writes, bench --json and --plot) goes through Write.
package atomicfile
