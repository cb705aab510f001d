// appservice-operator: flags and wiring only.
#include <glog/logging.h>

#include <cstring>
#include <iostream>

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--version") == 0) {
      std::cout << "appservice-operator " << ASOP_VERSION << "\n";
      return 0;
    }
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::cout << "usage: appservice-operator [--version] [--help]\n"
                   "The reconcile loop is not wired in yet; see README.md for the roadmap.\n";
      return 0;
    }
  }
  google::InitGoogleLogging(argv[0]);
  std::cerr << "appservice-operator: the reconcile loop is not wired in yet (see README.md)\n";
  return 2;
}
