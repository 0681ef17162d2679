// The dashboard's POST actions (Dashboard::QueueAction, WorkerAction, JobAction): the CSRF check
// has passed (dashboard.cc HandlePost); each runs the engine operation the protocol's command
// runs, then answers 303 to the page with a message code.
#include <set>

#include "bulkhead/dashboard/dashboard.h"
#include "bulkhead/dashboard/html.h"
#include "bulkhead/dashboard/job_list_page.h"

namespace bulkhead::dashboard {

void Dashboard::QueueAction(const std::string& body, HttpServer::Reply reply) {
  FormFields form = FormFields::Parse(body);
  std::string queue = form.Get("queue"), action = form.Get("action");
  if (queue.empty()) return reply(ErrorPage(400, "no queue given"));
  auto done = [this, alive = std::weak_ptr<bool>(alive_), action,
               reply = std::move(reply)](Status s) {
    if (!alive.lock()) return;
    if (!s.ok()) return reply(ErrorPage(503, s.message()));
    reply(Redirect("/queues", action == "pause"    ? "paused"
                              : action == "resume" ? "resumed"
                                                   : "cleared"));
  };
  if (action == "pause" || action == "resume") {
    engine_.PauseQueues({queue}, action == "pause", std::move(done));
  } else if (action == "clear") {
    engine_.RemoveQueues({queue}, std::move(done));
  } else {
    reply(ErrorPage(400, "action must be pause, resume or clear, not \"" + action + "\""));
  }
}

void Dashboard::WorkerAction(const std::string& body, HttpServer::Reply reply) {
  FormFields form = FormFields::Parse(body);
  std::string wid = form.Get("wid"), action = form.Get("action");
  auto state = ParseWorkerState(action);
  if (!state.ok() || *state == WorkerState::kRunning) {
    return reply(ErrorPage(400, "action must be quiet or terminate, not \"" + action + "\""));
  }
  if (Status s = engine_.SignalWorker(wid, *state); !s.ok()) {
    return reply(ErrorPage(404, s.message()));
  }
  reply(Redirect("/busy", action));
}

void Dashboard::HostAction(const std::string& body, HttpServer::Reply reply) {
  FormFields form = FormFields::Parse(body);
  std::string host = form.Get("host"), action = form.Get("action");
  if (action != "probe" && action != "forget") {
    return reply(ErrorPage(400, "action must be probe or forget, not \"" + action + "\""));
  }
  if (!sources_.host_action) return reply(ErrorPage(404, "no delivery engine"));
  Status s = sources_.host_action(host, action);
  if (s.code() == StatusCode::kNotFound) return reply(ErrorPage(404, s.message()));
  if (!s.ok()) return reply(ErrorPage(409, s.message()));
  HttpResponseOut r = Redirect("/hosts", action);
  for (auto& [k, v] : r.headers) {
    if (k == "Location") v += "&host=" + UrlEncode(host);
  }
  reply(std::move(r));
}

void Dashboard::JobAction(JobState set, const std::string& body, HttpServer::Reply reply) {
  FormFields form = FormFields::Parse(body);
  std::string action = form.Get("action");
  MutateOp op;
  if (action == "requeue") {
    op = MutateOp::kRequeue;
  } else if (action == "delete") {
    op = MutateOp::kDiscard;
  } else if (action == "kill" && set != JobState::kDead) {
    op = MutateOp::kKill;
  } else {
    return reply(ErrorPage(400, "unknown action \"" + action + "\" for this set"));
  }
  const char* path = SetPageOf(set).path;
  MutateFilter filter;
  for (auto& jid : form.GetAll("jid")) {
    if (!jid.empty()) filter.jids.insert(std::move(jid));
  }
  // An empty jid set would mean "every job" to MUTATE: never from a form with nothing checked.
  if (filter.jids.empty()) return reply(Redirect(path, "none"));
  // Back to the list as it was shown (its filters and position), rebuilt from known fields only.
  std::string back;
  for (const char* name : {"offset", "queue", "jobtype", "q"}) {
    std::string value = form.Get(std::string("back_") + name);
    if (!value.empty() && !(std::string_view(name) == "offset" && value == "0")) {
      back += std::string("&") + name + "=" + UrlEncode(value);
    }
  }
  engine_.Mutate(op, set, std::move(filter),
                 [this, alive = std::weak_ptr<bool>(alive_), path, action, back,
                  reply = std::move(reply)](Status s) {
                   if (!alive.lock()) return;
                   if (!s.ok()) return reply(ErrorPage(503, s.message()));
                   HttpResponseOut r = Redirect(path, action);
                   for (auto& [k, v] : r.headers) {
                     if (k == "Location") v += back;
                   }
                   reply(std::move(r));
                 });
}

// The Store has no MUTATE for queues (neither has Faktory's): the job is looked up and, while it
// is queued, removed (Store::Remove). A worker's FETCH between the two makes the delete end that
// reservation instead; its ACK or FAIL then finds no job, as after a MUTATE discard of a retry.
void Dashboard::QueuedJobAction(const std::string& body, HttpServer::Reply reply) {
  FormFields form = FormFields::Parse(body);
  std::string jid = form.Get("jid"), action = form.Get("action");
  if (action != "delete") {
    return reply(ErrorPage(400, "action must be delete, not \"" + action + "\""));
  }
  if (jid.empty()) return reply(ErrorPage(400, "no jid given"));
  Store* store = &engine_.store();
  store->FindJob(jid, [this, store, alive = std::weak_ptr<bool>(alive_), jid,
                       reply = std::move(reply)](Result<std::optional<JobRecord>> job) mutable {
    if (!alive.lock()) return;
    if (!job.ok()) return reply(ErrorPage(503, job.status().message()));
    if (!job->has_value()) return reply(ErrorPage(404, "no job " + jid));
    if ((*job)->state != JobState::kQueued) {
      return reply(ErrorPage(409, "job " + jid + " is no longer queued: see its page"));
    }
    store->Remove(jid, [this, alive, reply = std::move(reply)](Status s) {
      if (!alive.lock()) return;
      if (!s.ok()) return reply(ErrorPage(503, s.message()));
      reply(Redirect("/queues", "deleted-queued"));
    });
  });
}

}  // namespace bulkhead::dashboard
