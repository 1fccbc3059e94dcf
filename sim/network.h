// The network seam: every host-to-host transfer of a simulated run goes through here, in one of
// two sharing models (cluster.network_solver, docs/cluster.md "Two network models"):
// - "simgrid": each transfer is a SimGrid communication, its rate the max-min share SimGrid's
//   solver computes over every flow in flight (exact for its model; a flow's start or end
//   re-solves every flow it shares a link with);
// - "fluid": the same routes, latencies, bandwidths and factors, the rates computed by
//   FluidNetwork (fluid_network.h) at a cost per flow event that does not grow with the flows
//   sharing a link; no SimGrid network action at all.
// A Box carries payloads (a server's inbox, acknowledgements, a ring's passes): a SimGrid
// mailbox, or with the fluid model a queue on its receiver's host that the transfer fills.
#pragma once

#include <simgrid/s4u.hpp>

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "experiment/spec.h"

namespace gbasim {

namespace sg4 = simgrid::s4u;

class FluidNetwork;
struct FluidActivity;

// A transfer or a receive in flight; wait for it through the Network that started it.
class Transfer {
 public:
  Transfer() = default;

 private:
  friend class Network;
  friend class Box;
  sg4::CommPtr comm_;
  std::shared_ptr<FluidActivity> fluid_;
};

class Network {
 public:
  // `home` hosts the fluid model's actor (any host of the platform). `fluid_exact`: the fluid
  // model solves max-min exactly at every flow event (a check of it; as slow as SimGrid's).
  Network(NetworkSolver solver, sg4::Host* home, bool fluid_exact = false);
  ~Network();
  Network(const Network&) = delete;
  Network& operator=(const Network&) = delete;

  NetworkSolver solver() const { return fluid_ ? NetworkSolver::kFluid : NetworkSolver::kSimGrid; }
  // Starts moving `bytes` (no payload) from `src` to `dst`.
  Transfer send(sg4::Host* src, sg4::Host* dst, double bytes);
  void wait(const Transfer& transfer);
  // Waits for every one, in order.
  void wait_all(const std::vector<Transfer>& transfers);
  // Waits for the first to end; returns its index.
  size_t wait_any(const std::vector<Transfer>& transfers);

 private:
  friend class Box;
  std::unique_ptr<FluidNetwork> fluid_;
};

// Payloads to one receiver. The payload is passed as-is (the receiver does not own it).
class Box {
 public:
  // `owner`: the host of the actor that receives from this box.
  Box(Network& network, const std::string& name, sg4::Host* owner);

  // From the calling actor's host; returns once received (SimGrid) or arrived (fluid).
  void put(void* payload, double bytes);
  Transfer put_async(void* payload, double bytes);
  // Nobody waits for it.
  void put_detached(void* payload, double bytes);
  template <class T>
  T* get() {
    return static_cast<T*>(get_payload());
  }
  // A receive in flight: `*into` is set when it ends.
  Transfer get_async(void** into);
  // A payload has arrived and waits to be taken.
  bool ready() const;
  // Payloads flow to `actor` before it asks (as a server's small messages do), and are handed
  // over in the order they were sent, not the order they arrived: SimGrid's permanent mailbox
  // does so, and the fluid model's box follows it, so that the two models differ in the flows'
  // rates alone. (Without a receiver, the fluid model's box takes payloads in as they arrive.)
  // Call it before anything is put into the box.
  void set_receiver(const sg4::ActorPtr& actor);

  // The fluid model: a payload has arrived (what put_async gave start()).
  void deliver(void* payload);

 private:
  void* get_payload();

  Network& network_;
  sg4::Mailbox* mailbox_ = nullptr;  // simgrid
  sg4::Host* owner_;
  void hand_over(void* payload);

  std::deque<void*> arrived_;                          // fluid: not yet taken
  std::deque<std::shared_ptr<FluidActivity>> takers_;  // fluid: receives waiting
  // Fluid, with a receiver set: the payloads in flight in the order they were sent (a deque
  // keeps each one's place while others come and go).
  struct Sent {
    void* payload;
    bool arrived;
  };
  bool in_send_order_ = false;
  std::deque<Sent> sent_;
};

}  // namespace gbasim
