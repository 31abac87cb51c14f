#include "lint/base/unified_diff.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

namespace mblint {

namespace {

// Lines with their terminators; a last line may have none.
std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t at = 0;
  while (at < text.size()) {
    size_t newline = text.find('\n', at);
    size_t end = newline == std::string_view::npos ? text.size() : newline + 1;
    lines.push_back(text.substr(at, end - at));
    at = end;
  }
  return lines;
}

enum class OpKind { Equal, Delete, Insert };

struct Op {
  OpKind kind;
  size_t old_line;  // 0-based index in `before` (Equal, Delete)
  size_t new_line;  // 0-based index in `after` (Equal, Insert)
};

// Myers' O((N+M)D) shortest edit script over a[a0..a1) and b[b0..b1),
// appended to `ops` in order. `frontier[d][k + d]` is the furthest x on
// diagonal k after d edits, kept for the walk back.
void myers(const std::vector<std::string_view>& a, size_t a0, size_t a1, const std::vector<std::string_view>& b,
           size_t b0, size_t b1, std::vector<Op>& ops) {
  const long n = static_cast<long>(a1 - a0);
  const long m = static_cast<long>(b1 - b0);
  auto same = [&](long x, long y) { return a[a0 + x] == b[b0 + y]; };
  std::vector<std::vector<long>> frontier;
  auto previous_diagonal = [&](const std::vector<long>& v, long d, long k) {
    if (k == -d) return k + 1;
    if (k == d) return k - 1;
    return v[k - 1 + (d - 1)] < v[k + 1 + (d - 1)] ? k + 1 : k - 1;
  };
  bool done = false;
  for (long d = 0; !done && d <= n + m; ++d) {
    std::vector<long> v(2 * d + 1, 0);
    for (long k = -d; k <= d; k += 2) {
      long x = 0;
      if (d > 0) {
        const std::vector<long>& prev = frontier.back();
        long pk = previous_diagonal(prev, d, k);
        x = pk == k + 1 ? prev[pk + d - 1] : prev[pk + d - 1] + 1;
      }
      long y = x - k;
      while (x < n && y < m && same(x, y)) ++x, ++y;
      v[k + d] = x;
      if (x >= n && y >= m) done = true;
    }
    frontier.push_back(std::move(v));
  }
  std::vector<Op> reversed;
  long x = n, y = m;
  for (long d = static_cast<long>(frontier.size()) - 1; d > 0; --d) {
    long k = x - y;
    const std::vector<long>& prev = frontier[d - 1];
    long pk = previous_diagonal(prev, d, k);
    long px = prev[pk + d - 1];
    long py = px - pk;
    long mid_x = pk == k + 1 ? px : px + 1;
    while (x > mid_x) {
      --x, --y;
      reversed.push_back({OpKind::Equal, a0 + x, b0 + y});
    }
    if (pk == k + 1) {
      reversed.push_back({OpKind::Insert, a0 + px, b0 + py});
    } else {
      reversed.push_back({OpKind::Delete, a0 + px, b0 + py});
    }
    x = px, y = py;
  }
  while (x > 0) {
    --x, --y;
    reversed.push_back({OpKind::Equal, a0 + x, b0 + y});
  }
  ops.insert(ops.end(), reversed.rbegin(), reversed.rend());
}

std::vector<Op> diff_lines(const std::vector<std::string_view>& a, const std::vector<std::string_view>& b) {
  std::vector<Op> ops;
  size_t prefix = 0;
  while (prefix < a.size() && prefix < b.size() && a[prefix] == b[prefix]) {
    ops.push_back({OpKind::Equal, prefix, prefix});
    ++prefix;
  }
  size_t suffix = 0;
  while (suffix < a.size() - prefix && suffix < b.size() - prefix &&
         a[a.size() - 1 - suffix] == b[b.size() - 1 - suffix]) {
    ++suffix;
  }
  myers(a, prefix, a.size() - suffix, b, prefix, b.size() - suffix, ops);
  for (size_t i = suffix; i > 0; --i) ops.push_back({OpKind::Equal, a.size() - i, b.size() - i});
  return ops;
}

// "l,n", or "l" when n is 1; an empty range names the line before it.
std::string range(size_t first, size_t count) {
  if (count == 1) return fmt::format("{}", first + 1);
  return fmt::format("{},{}", count == 0 ? first : first + 1, count);
}

void put_line(std::string& out, char prefix, std::string_view line) {
  out += prefix;
  out.append(line);
  if (line.empty() || line.back() != '\n') out += "\n\\ No newline at end of file\n";
}

}  // namespace

std::string unified_diff(std::string_view before, std::string_view after, std::string_view old_label,
                         std::string_view new_label, int context) {
  if (before == after) return "";
  std::vector<std::string_view> a = split_lines(before);
  std::vector<std::string_view> b = split_lines(after);
  std::vector<Op> ops = diff_lines(a, b);
  const size_t ctx = static_cast<size_t>(std::max(context, 0));

  std::string out = fmt::format("--- {}\n+++ {}\n", old_label, new_label);
  size_t i = 0;
  while (i < ops.size()) {
    if (ops[i].kind == OpKind::Equal) {
      ++i;
      continue;
    }
    // A hunk: from `ctx` lines before this change to `ctx` lines after the
    // last change that is at most 2 * ctx equal lines from the previous one.
    size_t start = i >= ctx ? i - ctx : 0;
    size_t end = i;
    while (end < ops.size()) {
      size_t run = end;
      while (run < ops.size() && ops[run].kind != OpKind::Equal) ++run;
      size_t equal = run;
      while (equal < ops.size() && ops[equal].kind == OpKind::Equal) ++equal;
      if (equal == ops.size() || equal - run > 2 * ctx) {
        end = std::min(run + ctx, ops.size());
        break;
      }
      end = equal;
    }
    // Every op records its position in both files (an insertion: the number
    // of old lines before it), so the first op places the hunk in both.
    size_t old_first = ops[start].old_line, new_first = ops[start].new_line;
    size_t old_count = 0, new_count = 0;
    std::string body;
    for (size_t k = start; k < end; ++k) {
      const Op& op = ops[k];
      if (op.kind == OpKind::Equal) {
        put_line(body, ' ', a[op.old_line]);
        ++old_count, ++new_count;
      } else if (op.kind == OpKind::Delete) {
        put_line(body, '-', a[op.old_line]);
        ++old_count;
      } else {
        put_line(body, '+', b[op.new_line]);
        ++new_count;
      }
    }
    out += fmt::format("@@ -{} +{} @@\n", range(old_first, old_count), range(new_first, new_count));
    out += body;
    i = end;
  }
  return out;
}

}  // namespace mblint
