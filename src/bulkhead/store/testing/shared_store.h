// SharedStore: a DeferredStore whose ClusterLink says several nodes share it (shared() is true, as
// the Redis store's does); everything else is the inner store's, answered later. For tests of what
// a node does differently on a shared store, without a Redis server.
#pragma once

#include <memory>
#include <utility>

#include "bulkhead/store/testing/deferred_cluster_link.h"
#include "bulkhead/store/testing/deferred_store.h"

namespace bulkhead {

class SharedStore final : public DeferredStore {
 public:
  SharedStore(std::unique_ptr<Store> inner, Poster poster)
      : DeferredStore(std::move(inner), std::move(poster)),
        link_(DeferredStore::cluster(), later()) {}
  SharedStore(Store& inner, Poster poster)
      : DeferredStore(inner, std::move(poster)), link_(DeferredStore::cluster(), later()) {}
  ClusterLink& cluster() override { return link_; }

 private:
  struct SharedLink final : DeferredClusterLink {
    using DeferredClusterLink::DeferredClusterLink;
    bool shared() const override { return true; }
  };
  SharedLink link_;
};

}  // namespace bulkhead
