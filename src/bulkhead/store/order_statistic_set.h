// OrderStatisticSet<T>: an ordered set (as std::set) that also knows the rank of each element, so
// the element at position k is found in O(log n) (find_by_order) instead of k steps.
//
// It is libstdc++'s own policy-based red-black tree (<ext/pb_ds>, a header of the compiler's
// standard library: no extra package), with the order-statistics node update: each node keeps
// its subtree size, which insert and erase maintain in O(log n). Iteration, begin/end, insert,
// erase (by key or iterator), lower_bound, size and empty behave as std::set's; iterators are
// bidirectional. Thread-compatible, as std::set.
#pragma once

#include <ext/pb_ds/assoc_container.hpp>
#include <ext/pb_ds/tree_policy.hpp>
#include <functional>

namespace bulkhead {

template <typename T, typename Less = std::less<T>>
using OrderStatisticSet = __gnu_pbds::tree<T, __gnu_pbds::null_type, Less, __gnu_pbds::rb_tree_tag,
                                           __gnu_pbds::tree_order_statistics_node_update>;

}  // namespace bulkhead
