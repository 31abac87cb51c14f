#include "lint/base/output_file.h"

#include <fstream>
#include <system_error>

#include <unistd.h>

namespace mblint {

bool write_file_atomically(const std::filesystem::path& target, std::string_view content, std::string& error) {
  namespace fs = std::filesystem;
  fs::path temp = target;
  temp += ".mblint-tmp-" + std::to_string(::getpid());
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) {
      error = "cannot create a file in its directory";
      return false;
    }
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.flush();
    if (!out) {
      error = "write failed";
      std::error_code ignored;
      fs::remove(temp, ignored);
      return false;
    }
  }
  std::error_code ec;
  fs::file_status status = fs::status(target, ec);
  if (!ec && fs::is_regular_file(status)) fs::permissions(temp, status.permissions(), ec);
  fs::rename(temp, target, ec);
  if (ec) {
    error = ec.message();
    std::error_code ignored;
    fs::remove(temp, ignored);
    return false;
  }
  return true;
}

}  // namespace mblint
