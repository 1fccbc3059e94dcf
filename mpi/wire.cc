#include "mpi/wire.h"

#include <mpi.h>

#include <chrono>
#include <thread>

#include "base/clock.h"

namespace gbasim::mpi {

void send(const Buffer& b, int to, int tag) {
  auto& bytes = const_cast<Buffer&>(b).bytes();
  MPI_Send(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, to, tag, MPI_COMM_WORLD);
}

Buffer receive(int from, int tag, int* source, double* idle_s) {
  MPI_Status status;
  int ready = 0;
  const auto start = WallClock::now();
  for (;;) {
    MPI_Iprobe(from, tag, MPI_COMM_WORLD, &ready, &status);
    if (ready) break;
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
  if (idle_s) *idle_s += seconds_since(start);
  int count = 0;
  MPI_Get_count(&status, MPI_BYTE, &count);
  Buffer b;
  b.bytes().resize(static_cast<size_t>(count));
  MPI_Recv(b.bytes().data(), count, MPI_BYTE, status.MPI_SOURCE, tag, MPI_COMM_WORLD,
           MPI_STATUS_IGNORE);
  if (source) *source = status.MPI_SOURCE;
  return b;
}

void put_rows(Buffer& b, const SparseRows& s) {
  b.put<int64_t>(static_cast<int64_t>(s.rows.size()));
  b.put<int64_t>(s.values.cols());
  b.put(s.rows.data(), s.rows.size());
  b.put(s.values.data(), static_cast<size_t>(s.values.size()));
}

SparseRows get_rows(Buffer& b) {
  SparseRows s;
  const auto n = b.get<int64_t>(), dim = b.get<int64_t>();
  s.rows.resize(static_cast<size_t>(n));
  b.get(s.rows.data(), s.rows.size());
  s.values.resize(n, dim);
  b.get(s.values.data(), static_cast<size_t>(s.values.size()));
  return s;
}

void put_model(Buffer& b, Parameters& params, Optimizer* optimizer) {
  b.put(params.dense.data(), static_cast<size_t>(params.dense.size()));
  for (const auto& t : params.tables) b.put(t.data(), static_cast<size_t>(t.size()));
  if (optimizer == nullptr) return;
  b.put<int64_t>(optimizer->steps());
  optimizer->for_each_state([&](float* data, size_t n) { b.put(data, n); });
}

void get_model(Buffer& b, Parameters& params, Optimizer* optimizer) {
  b.get(params.dense.data(), static_cast<size_t>(params.dense.size()));
  for (auto& t : params.tables) b.get(t.data(), static_cast<size_t>(t.size()));
  if (optimizer == nullptr) return;
  optimizer->set_steps(b.get<int64_t>());
  optimizer->for_each_state([&](float* data, size_t n) { b.get(data, n); });
}

}  // namespace gbasim::mpi
