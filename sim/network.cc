#include "sim/network.h"

#include "sim/fluid_network.h"

namespace gbasim {

Network::Network(NetworkSolver solver, sg4::Host* home, bool fluid_exact) {
  if (solver == NetworkSolver::kFluid) fluid_ = std::make_unique<FluidNetwork>(home, fluid_exact);
}

Network::~Network() = default;

Transfer Network::send(sg4::Host* src, sg4::Host* dst, double bytes) {
  Transfer t;
  if (fluid_)
    t.fluid_ = fluid_->start(src, dst, bytes);
  else
    t.comm_ = sg4::Comm::sendto_async(src, dst, bytes);
  return t;
}

void Network::wait(const Transfer& transfer) {
  if (transfer.comm_)
    transfer.comm_->wait();
  else
    fluid_->wait({transfer.fluid_.get()}, true);
}

// (Cancelling the messages still in flight when a killed actor unwinds would spare the engine
// running them on after an early end, but a simcall from a dying actor hangs under thread
// contexts: they are left to finish; Training::now() keeps the run's end time.)
void Network::wait_all(const std::vector<Transfer>& transfers) {
  if (!fluid_) {
    for (const Transfer& t : transfers) t.comm_->wait();
    return;
  }
  std::vector<FluidActivity*> activities;
  activities.reserve(transfers.size());
  for (const Transfer& t : transfers) activities.push_back(t.fluid_.get());
  fluid_->wait(activities, true);
}

size_t Network::wait_any(const std::vector<Transfer>& transfers) {
  if (!fluid_) {
    std::vector<sg4::CommPtr> comms;
    comms.reserve(transfers.size());
    for (const Transfer& t : transfers) comms.push_back(t.comm_);
    return static_cast<size_t>(sg4::Comm::wait_any(comms));
  }
  std::vector<FluidActivity*> activities;
  activities.reserve(transfers.size());
  for (const Transfer& t : transfers) activities.push_back(t.fluid_.get());
  return fluid_->wait(activities, false);
}

Box::Box(Network& network, const std::string& name, sg4::Host* owner)
    : network_(network), owner_(owner) {
  if (!network_.fluid_) mailbox_ = sg4::Mailbox::by_name(name);
}

void Box::put(void* payload, double bytes) {
  if (mailbox_ != nullptr) return mailbox_->put(payload, bytes);
  network_.wait(put_async(payload, bytes));
}

Transfer Box::put_async(void* payload, double bytes) {
  Transfer t;
  if (mailbox_ != nullptr) {
    t.comm_ = mailbox_->put_async(payload, bytes);
    return t;
  }
  if (in_send_order_) {
    sent_.push_back(Sent{payload, false});
    payload = &sent_.back();
  }
  t.fluid_ = network_.fluid_->start(sg4::this_actor::get_host(), owner_, bytes, this, payload);
  return t;
}

void Box::put_detached(void* payload, double bytes) {
  if (mailbox_ != nullptr)
    mailbox_->put_init(payload, bytes)->detach();
  else
    put_async(payload, bytes);
}

Transfer Box::get_async(void** into) {
  Transfer t;
  if (mailbox_ != nullptr) {
    t.comm_ = mailbox_->get_async<void>(into);
  } else if (!arrived_.empty()) {
    *into = arrived_.front();
    arrived_.pop_front();
    t.fluid_ = network_.fluid_->done_now();
  } else {
    t.fluid_ = std::make_shared<FluidActivity>();
    t.fluid_->into = into;
    takers_.push_back(t.fluid_);
  }
  return t;
}

void* Box::get_payload() {
  if (mailbox_ != nullptr) return mailbox_->get<void>();
  void* payload = nullptr;
  network_.wait(get_async(&payload));
  return payload;
}

bool Box::ready() const { return mailbox_ != nullptr ? mailbox_->ready() : !arrived_.empty(); }

void Box::set_receiver(const sg4::ActorPtr& actor) {
  if (mailbox_ != nullptr)
    mailbox_->set_receiver(actor);
  else
    in_send_order_ = true;
}

void Box::deliver(void* payload) {
  if (!in_send_order_) return hand_over(payload);
  static_cast<Sent*>(payload)->arrived = true;
  while (!sent_.empty() && sent_.front().arrived) {
    void* first = sent_.front().payload;
    sent_.pop_front();
    hand_over(first);
  }
}

void Box::hand_over(void* payload) {
  if (takers_.empty()) {
    arrived_.push_back(payload);
    return;
  }
  std::shared_ptr<FluidActivity> taker = std::move(takers_.front());
  takers_.pop_front();
  *taker->into = payload;
  network_.fluid_->complete(*taker);
}

}  // namespace gbasim
