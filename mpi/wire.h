// gbasim-mpi's wire format: flat messages of values, sent and received by tag, and the
// sparse rows and the whole model as messages (mpi/mpi_runtime.h).
#pragma once

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "models/optimizer.h"
#include "models/layers.h"

namespace gbasim::mpi {

constexpr int kToServer = 1, kToWorker = 2;
enum MessageKind : int32_t { kAdmit = 1, kPush = 2, kGrant = 3, kStop = 4, kSyncNow = 5 };

// A flat message: values appended and read back in the same order.
class Buffer {
 public:
  template <class T>
  void put(const T* data, size_t count) {
    const size_t at = bytes_.size();
    bytes_.resize(at + count * sizeof(T));
    if (count) std::memcpy(bytes_.data() + at, data, count * sizeof(T));
  }
  template <class T>
  void put(T value) {
    put(&value, 1);
  }
  template <class T>
  void get(T* data, size_t count) {
    if (read_ + count * sizeof(T) > bytes_.size()) throw std::runtime_error("short MPI message");
    if (count) std::memcpy(data, bytes_.data() + read_, count * sizeof(T));
    read_ += count * sizeof(T);
  }
  template <class T>
  T get() {
    T value;
    get(&value, 1);
    return value;
  }
  std::vector<char>& bytes() { return bytes_; }

 private:
  std::vector<char> bytes_;
  size_t read_ = 0;
};

void send(const Buffer& b, int to, int tag);

// Receives the next message with `tag` (from `from`, or anyone), polling with short sleeps
// rather than spinning, so that a waiting rank leaves its core to the ranks that compute
// (the job may run oversubscribed).
Buffer receive(int from, int tag, int* source = nullptr, double* idle_s = nullptr);

void put_rows(Buffer& b, const SparseRows& s);

SparseRows get_rows(Buffer& b);

// The model (and, towards the workers, the optimizer's state) as one message.
void put_model(Buffer& b, Parameters& params, Optimizer* optimizer);

void get_model(Buffer& b, Parameters& params, Optimizer* optimizer);

}  // namespace gbasim::mpi
