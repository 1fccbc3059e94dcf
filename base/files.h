// Files: opened to read with a clear error, written whole or not at all.
#pragma once

#include <cstdio>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

namespace gbasim {

// Opens a file to read. Throws InputError naming it when it cannot be opened, is a folder
// (which a stream would open, and then fail to read) or a named pipe (whose open would wait
// for a writer for ever; a pipe the shell made, /dev/fd/N, is read).
std::ifstream open_input(const std::string& path, const std::string& what = "file");

// A file's whole text, or "" when it is not a regular file or cannot be read (for files gbasim
// wrote and redoes when they are missing or bad).
std::string read_text_or_empty(const std::string& path);

// Writes `text` (any bytes) to a temporary file beside `path`, synced to disk, then renames it
// into place, creating missing parent folders. Throws InputError on failure (a full disk, a
// read-only folder), saying that any earlier file at `path` is untouched, as it is.
// A symbolic link is followed: the file it points to is replaced, the link kept. A character
// device (/dev/null, /dev/stdout on a terminal) or a pipe is written in place, never replaced;
// a pipe that nobody reads, a folder, a block device or a socket is refused.
void write_text_atomically(const std::string& path, const std::string& text);

// Several files (path, text), as write_text_atomically writes each, all or none as far as a
// file system allows: every one is written to its temporary file first, and only then are they
// renamed into place, so a failed write (a full disk) leaves every earlier file untouched.
void write_texts_atomically(const std::vector<std::pair<std::string, std::string>>& files);

// Checks, before any work, that write_text_atomically(path) can succeed as far as can be told
// without writing: not a folder or a device it would refuse, and the nearest existing folder
// on its way takes new files. `what` names the output in the error ("result", "fragment").
void check_output_file(const std::string& path, const std::string& what);

// Where a command prints its table: standard error when `path` (its --out) is standard output
// itself, a pipe or a file (--out /dev/stdout | jq), so that it holds the JSON alone; standard
// output otherwise (a terminal or /dev/null shows or drops both alike).
std::FILE* table_stream(const std::string& path);

// The same for an output folder: a folder, or one that can be made.
void check_output_folder(const std::string& path, const std::string& what);

}  // namespace gbasim
