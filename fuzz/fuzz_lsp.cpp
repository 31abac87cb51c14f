// The language server as an editor drives it: the input is the byte stream a
// client writes to `mblint lsp` (Content-Length frames of JSON-RPC messages,
// or anything else), served to the end. This covers the framing (lengths too
// small, too large, missing, junk between frames), JSON-RPC dispatch, the
// document store with incremental changes, linting of unsaved buffers, hover
// and code actions. Replies go to /dev/null; a crash, hang or leak is the bug.
#include <sys/mman.h>
#include <fcntl.h>
#include <unistd.h>

#include <sstream>

#include "fuzz/fuzz_support.h"
#include "lint/lsp/lsp_server.h"
#include "rules/registry.h"

using namespace mblint;

namespace {

// The input as a readable descriptor (an in-memory file, so a 64 KiB input
// never blocks on a pipe's capacity).
int input_descriptor(const uint8_t* data, size_t size) {
  int fd = memfd_create("mblint-fuzz-lsp", 0);
  if (fd < 0) __builtin_trap();
  size_t written = 0;
  while (written < size) {
    ssize_t n = write(fd, data + written, size - written);
    if (n <= 0) __builtin_trap();
    written += static_cast<size_t>(n);
  }
  lseek(fd, 0, SEEK_SET);
  return fd;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const int null_out = open("/dev/null", O_WRONLY);
  int in = input_descriptor(data, size);
  std::ostringstream log;  // the server's stderr
  lsp::Server server;
  server.rules = all_rules();
  server.cwd = std::filesystem::temp_directory_path();
  server.log = &log;
  lsp::serve(server, in, null_out, 0);
  close(in);
  return 0;
}
