// The base protocol of the Language Server Protocol: messages framed by a
// `Content-Length: N` header block, read from and written to file
// descriptors. Framing problems never stop the reader: it reports them and
// resynchronises on the next `Content-Length:` header.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace mblint::lsp {

inline constexpr size_t kMaxMessageBytes = 64u << 20;  // a document is capped at 8 MiB anyway

struct Frame {
  enum Kind { Message, Broken, Eof } kind = Eof;
  std::string body;   // Message: the JSON text
  std::string error;  // Broken: what was wrong (for stderr)
};

struct FrameReader {
  int fd = 0;
  std::string buffer;
  size_t begin = 0;  // start of unconsumed bytes in `buffer`
  bool eof = false;
};

// The next frame; blocks until one is complete or the input ends.
Frame read_frame(FrameReader& reader);

// Whether a complete header block is already buffered (no read needed).
bool has_buffered_frame(const FrameReader& reader);

// Waits up to `timeout_ms` for input; true when some is readable (or EOF).
bool wait_readable(const FrameReader& reader, int timeout_ms);

// Put back the bytes of a frame whose body turned out to hold the next
// header (a Content-Length that was too large): reading resumes at `at`
// within the last frame's body.
void resync_into_body(FrameReader& reader, const Frame& frame, size_t at);

// Frame and write one message; false when the output is closed.
bool write_frame(int fd, std::string_view body);

}  // namespace mblint::lsp
