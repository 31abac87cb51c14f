#include "lint/lsp/lsp_transport.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <optional>

namespace mblint::lsp {

namespace {

constexpr std::string_view kLengthHeader = "content-length:";
constexpr size_t kMaxHeaderBytes = 8192;

bool read_more(FrameReader& reader) {
  if (reader.eof) return false;
  if (reader.begin > (1u << 20) && reader.begin * 2 > reader.buffer.size()) {  // drop consumed bytes
    reader.buffer.erase(0, reader.begin);
    reader.begin = 0;
  }
  char chunk[1 << 16];
  for (;;) {
    ssize_t got = ::read(reader.fd, chunk, sizeof chunk);
    if (got > 0) {
      reader.buffer.append(chunk, static_cast<size_t>(got));
      return true;
    }
    if (got < 0 && errno == EINTR) continue;
    reader.eof = true;
    return false;
  }
}

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// Case-insensitive search for the Content-Length header from `from`.
size_t find_length_header(std::string_view text, size_t from) {
  for (size_t i = from; i + kLengthHeader.size() <= text.size(); ++i) {
    size_t k = 0;
    while (k < kLengthHeader.size() && lower(text[i + k]) == kLengthHeader[k]) ++k;
    if (k == kLengthHeader.size()) return i;
  }
  return std::string_view::npos;
}

// The Content-Length value in a header block; nullopt when missing or bad.
std::optional<size_t> content_length(std::string_view headers) {
  size_t at = find_length_header(headers, 0);
  if (at == std::string_view::npos) return std::nullopt;
  size_t value = at + kLengthHeader.size();
  while (value < headers.size() && (headers[value] == ' ' || headers[value] == '\t')) ++value;
  size_t end = value;
  while (end < headers.size() && headers[end] >= '0' && headers[end] <= '9') ++end;
  size_t length = 0;
  auto parsed = std::from_chars(headers.data() + value, headers.data() + end, length);
  if (parsed.ec != std::errc() || end == value) return std::nullopt;
  size_t rest = end;
  while (rest < headers.size() && (headers[rest] == ' ' || headers[rest] == '\t')) ++rest;
  if (rest < headers.size() && headers[rest] != '\r' && headers[rest] != '\n') return std::nullopt;
  return length;
}

Frame broken(std::string error) {
  Frame frame;
  frame.kind = Frame::Broken;
  frame.error = std::move(error);
  return frame;
}

}  // namespace

bool has_buffered_frame(const FrameReader& reader) {
  return reader.buffer.find("\r\n\r\n", reader.begin) != std::string::npos;
}

bool wait_readable(const FrameReader& reader, int timeout_ms) {
  if (reader.eof) return true;
  pollfd fds{reader.fd, POLLIN, 0};
  int ready = ::poll(&fds, 1, timeout_ms);
  return ready != 0;  // an error also ends the wait: the read reports it
}

Frame read_frame(FrameReader& reader) {
  // The header block.
  size_t header_end;
  for (;;) {
    header_end = reader.buffer.find("\r\n\r\n", reader.begin);
    if (header_end != std::string::npos) break;
    if (reader.buffer.size() - reader.begin > kMaxHeaderBytes) {
      // Not a header: skip to the next Content-Length (or keep a short tail).
      size_t next = find_length_header(reader.buffer, reader.begin + 1);
      size_t skip_to = next != std::string::npos ? next : reader.buffer.size() - kLengthHeader.size();
      reader.begin = skip_to;
      return broken("skipped bytes that are not a message header");
    }
    if (!read_more(reader)) {
      bool leftover = reader.buffer.find_first_not_of(" \t\r\n", reader.begin) != std::string::npos;
      reader.begin = reader.buffer.size();
      return leftover ? broken("input ended inside a message header") : Frame{};
    }
  }
  std::string_view headers(reader.buffer.data() + reader.begin, header_end + 2 - reader.begin);
  size_t body_begin = header_end + 4;
  // Bytes before the last Content-Length header are leftovers of a broken
  // frame (a Content-Length that was too small): drop them.
  size_t at = find_length_header(headers, 0);
  size_t last = at;
  while (at != std::string_view::npos) {
    last = at;
    at = find_length_header(headers, at + 1);
  }
  std::string junk;
  if (last != std::string_view::npos && last > 0 && headers[last - 1] != '\n') {
    junk = "dropped bytes before a Content-Length header";
  }
  if (last != std::string_view::npos) headers.remove_prefix(last);
  std::optional<size_t> length = content_length(headers);
  if (!length) {
    reader.begin = body_begin;
    return broken("a message header without a valid Content-Length");
  }
  if (*length > kMaxMessageBytes) {
    // Discard the body without holding it.
    size_t remaining = *length;
    reader.begin = body_begin;
    while (remaining > 0) {
      size_t have = reader.buffer.size() - reader.begin;
      size_t take = std::min(have, remaining);
      reader.begin += take;
      remaining -= take;
      if (remaining > 0) {
        reader.buffer.clear();
        reader.begin = 0;
        if (!read_more(reader)) break;
      }
    }
    std::string error = "a message over the size limit was skipped (Content-Length: ";
    error += std::to_string(*length);
    error += ')';
    return broken(std::move(error));
  }
  while (reader.buffer.size() - body_begin < *length) {
    if (!read_more(reader)) {
      reader.begin = reader.buffer.size();
      return broken("input ended inside a message body");
    }
  }
  Frame frame;
  frame.kind = Frame::Message;
  frame.body = reader.buffer.substr(body_begin, *length);
  frame.error = junk;
  reader.begin = body_begin + *length;
  return frame;
}

void resync_into_body(FrameReader& reader, const Frame& frame, size_t at) {
  // The body was the last `frame.body.size()` bytes consumed.
  size_t body_begin = reader.begin - frame.body.size();
  reader.begin = body_begin + at;
}

bool write_frame(int fd, std::string_view body) {
  std::string message = "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n";
  message += body;
  size_t written = 0;
  while (written < message.size()) {
    ssize_t n = ::write(fd, message.data() + written, message.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    written += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace mblint::lsp
