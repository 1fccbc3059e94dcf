#include "sim/timeline.h"

#include <cinttypes>
#include <cstdio>

namespace gbasim {

namespace {

// Track ids: the workers are process 1, one thread a worker; the training is process 2, its
// updates thread 0 and its snapshots thread 1, and it holds the counters; the parameter
// server is process 3: its actor thread 0, shard k thread 1 + k. The workers' process
// name is the first event, written without a comma before it.
constexpr int kWorkers = 1, kTraining = 2, kServer = 3;

double us(double seconds) { return seconds * 1e6; }

}  // namespace

Timeline::Timeline(double from_s, double to_s, int64_t max_events)
    : from_s_(from_s), to_s_(to_s), max_events_(max_events) {}

bool Timeline::keep(double start, double end) {
  if (truncated_ || end < from_s_ || start > to_s_) return false;
  if (events_ >= max_events_) {
    truncated_ = true;
    return false;
  }
  ++events_;
  return true;
}

void Timeline::add(const char* json) {
  body_ += ",\n";
  body_ += json;
}

void Timeline::worker_span(int w, const char* what, double start, double end) {
  if (end <= start || !keep(start, end)) return;
  char e[200];
  std::snprintf(e, sizeof e, R"({"name":"%s","ph":"X","ts":%.3f,"dur":%.3f,"pid":%d,"tid":%d})",
                what, us(start), us(end - start), kWorkers, w);
  add(e);
}

void Timeline::server_span(const char* what, double start, double end) {
  if (end <= start || !keep(start, end)) return;
  char e[200];
  std::snprintf(e, sizeof e, R"({"name":"%s","ph":"X","ts":%.3f,"dur":%.3f,"pid":%d,"tid":0})",
                what, us(start), us(end - start), kServer);
  add(e);
}

void Timeline::shard_span(int shard, const char* what, double start, double end) {
  if (end <= start || !keep(start, end)) return;
  char e[200];
  std::snprintf(e, sizeof e, R"({"name":"%s","ph":"X","ts":%.3f,"dur":%.3f,"pid":%d,"tid":%d})",
                what, us(start), us(end - start), kServer, 1 + shard);
  add(e);
}

void Timeline::worker_instant(int w, const char* what, double t) {
  if (!keep(t, t)) return;
  char e[200];
  std::snprintf(e, sizeof e, R"({"name":"%s","ph":"i","s":"t","ts":%.3f,"pid":%d,"tid":%d})", what,
                us(t), kWorkers, w);
  add(e);
}

void Timeline::update(double t, int64_t step) {
  if (!keep(t, t)) return;
  char e[200];
  std::snprintf(e, sizeof e,
                R"({"name":"update","ph":"i","s":"t","ts":%.3f,"pid":%d,"tid":0,)"
                R"("args":{"global_step":%)" PRId64 "}}",
                us(t), kTraining, step);
  add(e);
}

void Timeline::snapshot(double t) {
  if (!keep(t, t)) return;
  char e[200];
  std::snprintf(e, sizeof e, R"({"name":"snapshot","ph":"i","s":"t","ts":%.3f,"pid":%d,"tid":1})",
                us(t), kTraining);
  add(e);
}

void Timeline::counter(const char* name, double t, double value) {
  if (!keep(t, t)) return;
  char e[200];
  std::snprintf(e, sizeof e, R"({"name":"%s","ph":"C","ts":%.3f,"pid":%d,"args":{"value":%.6g}})",
                name, us(t), kTraining, value);
  add(e);
}

std::string Timeline::text(int workers, int shards) const {
  std::string text = "{\"traceEvents\":[\n";
  char e[200];
  auto name = [&](const char* kind, int pid, int tid, const std::string& what) {
    std::snprintf(e, sizeof e, R"({"name":"%s","ph":"M","pid":%d,"tid":%d,"args":{"name":"%s"}})",
                  kind, pid, tid, what.c_str());
    if (kind != std::string("process_name") || pid != kWorkers) text += ",\n";
    text += e;
  };
  name("process_name", kWorkers, 0, "workers");
  for (int w = 0; w < workers; ++w) name("thread_name", kWorkers, w, "worker " + std::to_string(w));
  name("process_name", kTraining, 0, "training");
  name("thread_name", kTraining, 0, "updates");
  name("thread_name", kTraining, 1, "snapshots");
  name("process_name", kServer, 0, "parameter server");
  name("thread_name", kServer, 0, "server");
  for (int k = 0; k < shards; ++k)
    name("thread_name", kServer, 1 + k, "shard " + std::to_string(k));
  text += body_;
  std::snprintf(e, sizeof e,
                "\n],\"displayTimeUnit\":\"ms\",\"otherData\":{\"clock\":\"simulated "
                "microseconds\",\"events\":%" PRId64 ",\"truncated\":%s}}\n",
                events_, truncated_ ? "true" : "false");
  text += e;
  return text;
}

}  // namespace gbasim
