#include <cstdlib>
#include <string_view>

#include "bulkhead/store/embedded_store.h"
#include "bulkhead/store/sqlite_change_log.h"
#include "bulkhead/store/store.h"

namespace bulkhead {

Result<std::unique_ptr<Store>> OpenStoreFromUrl(const std::string& url, Store::Poster poster,
                                                const StoreOptions& options) {
  std::unique_ptr<Store> store;
  if (url == "memory:" || url == "memory") {
    store = std::make_unique<EmbeddedStore>("memory", nullptr);
  } else if (url.rfind("sqlite:", 0) == 0) {
    std::string path = url.substr(7);
    if (path.rfind("//", 0) == 0) path = path.substr(2);  // sqlite:///abs/path
    if (path.empty()) return Status::InvalidArgument("store URL " + url + " has no file path");
    if (options.durability != "process" && options.durability != "power") {
      return Status::InvalidArgument("durability must be \"process\" or \"power\", not \"" +
                                     options.durability + "\"");
    }
    bool salvage = options.salvage_damaged_jobs;
    store = std::make_unique<EmbeddedStore>(
        "sqlite", std::make_unique<SqliteChangeLog>(path, std::move(poster), options.durability,
                                                    options.max_page_count_for_tests, salvage));
  } else if (url.rfind("redis://", 0) == 0) {
    return Status::InvalidArgument("the redis store is not available in this build yet: " + url);
  } else {
    return Status::InvalidArgument("unsupported store URL \"" + url +
                                   "\": use sqlite:PATH or memory:");
  }
  Status s = store->Open();
  if (!s.ok()) return s;
  return store;
}

}  // namespace bulkhead
