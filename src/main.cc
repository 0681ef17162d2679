#include <cstdio>
int main() { std::puts("bulkhead " BULKHEAD_VERSION); return 0; }
