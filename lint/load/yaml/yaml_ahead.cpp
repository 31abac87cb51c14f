#include "lint/load/yaml/yaml_ahead.h"

#include <sched.h>

#include <algorithm>
#include <system_error>

namespace mblint {

unsigned available_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

YamlAhead::YamlAhead(const SourceSet& sources, std::vector<FileId> files, unsigned threads)
    : sources_(sources), slots_(files.size()), window_(8 * static_cast<size_t>(std::max(1u, threads))) {
  for (size_t i = 0; i < files.size(); ++i) slots_[i].file = files[i];
  queue_up_to(std::min(slots_.size(), window_));
  for (unsigned i = 1; i < threads && i < slots_.size(); ++i) {
    try {
      workers_.emplace_back([this] { work(); });
    } catch (const std::system_error&) {
      break;  // no more threads to be had: the caller's thread parses the rest
    }
  }
}

YamlAhead::~YamlAhead() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  queued_.notify_all();
  for (std::thread& worker : workers_) worker.join();
}

// Only the owner calls this, and only it writes queued_end_; a worker never
// touches a slot at or past queued_end_, so the copies need no lock.
void YamlAhead::queue_up_to(size_t end) {
  if (end <= queued_end_) return;
  for (size_t i = queued_end_; i < end; ++i) slots_[i].source = sources_.files[slots_[i].file];
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queued_end_ = end;
  }
  queued_.notify_all();
}

// Parse `slot` from `source` with the lock released; `lock` is held again on return.
void YamlAhead::parse(Slot& slot, const SourceFile& source, std::unique_lock<std::mutex>& lock) {
  lock.unlock();
  LoadedYaml parsed;
  std::exception_ptr error;
  try {
    parsed = load_config_yaml(source, slot.file);
  } catch (...) {
    error = std::current_exception();  // rethrown by take() on the owner's thread
  }
  lock.lock();
  slot.parsed = std::move(parsed);
  slot.error = error;
  slot.done = true;
}

void YamlAhead::work() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    queued_.wait(lock, [this] { return stopping_ || next_ < queued_end_; });
    if (stopping_) return;
    Slot& slot = slots_[next_++];
    SourceFile source = std::move(*slot.source);
    slot.source.reset();
    parse(slot, source, lock);
    parsed_.notify_all();
  }
}

LoadedYaml YamlAhead::take(size_t index) {
  queue_up_to(std::min(slots_.size(), index + window_));
  std::unique_lock<std::mutex> lock(mutex_);
  Slot& wanted = slots_[index];
  while (!wanted.done) {
    if (next_ >= queued_end_) {
      parsed_.wait(lock, [&wanted] { return wanted.done; });
      break;
    }
    // Rather than wait for a worker, parse the next file nobody has started
    // (the wanted one itself when no worker has reached it).
    Slot& slot = slots_[next_++];
    slot.source.reset();  // this thread owns the SourceSet: no copy needed
    parse(slot, sources_.files[slot.file], lock);
  }
  if (wanted.error) std::rethrow_exception(wanted.error);
  return std::move(wanted.parsed);
}

}  // namespace mblint
