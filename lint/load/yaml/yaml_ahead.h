// Parsing the YAML files of a run ahead of the job builder, on worker threads.
// Parsing is most of a run's work and each file parses on its own; building
// jobs and checking them stays on the calling thread, in order, so the
// findings are the same whatever the number of threads.
#pragma once

#include <condition_variable>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "lint/base/source.h"
#include "lint/load/yaml/config_yaml.h"

namespace mblint {

// The CPUs this process may run on (its affinity mask, which CI runners and
// `taskset` narrow); at least 1.
unsigned available_cpus();

class YamlAhead {
 public:
  // Parse `files` of `sources` (config YAMLs) with `threads` threads in all,
  // the caller's included. At most a window of parses waits to be taken.
  YamlAhead(const SourceSet& sources, std::vector<FileId> files, unsigned threads);
  ~YamlAhead();  // stops and joins the workers
  YamlAhead(const YamlAhead&) = delete;
  YamlAhead& operator=(const YamlAhead&) = delete;

  // The parse of files[index]. Call with index 0, 1, 2, ... from the thread
  // that owns `sources` (which may add files between calls). Rather than wait
  // for a worker, it parses the next file nobody has started (files[index]
  // itself when no worker has reached it).
  LoadedYaml take(size_t index);

 private:
  // Where a slot stands follows from its index: at or past queued_end_ it
  // waits to be queued, in [next_, queued_end_) it is queued, below next_ it
  // was started; `done` says its parse is in.
  struct Slot {
    FileId file = kNoFile;
    // A copy of the file, made by the owner when it queues the slot: a
    // worker never reads the SourceSet, whose vector moves as it grows.
    std::optional<SourceFile> source;
    bool done = false;
    LoadedYaml parsed;
    std::exception_ptr error;
  };

  void queue_up_to(size_t end);
  void parse(Slot& slot, const SourceFile& source, std::unique_lock<std::mutex>& lock);
  void work();

  const SourceSet& sources_;
  std::vector<Slot> slots_;
  size_t window_;
  std::mutex mutex_;
  std::condition_variable queued_;  // workers wait for a queued slot
  std::condition_variable parsed_;  // the owner waits for a slot a worker parses
  size_t queued_end_ = 0;           // slots [0, queued_end_) were queued
  size_t next_ = 0;                 // the first queued slot nobody has started
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace mblint
