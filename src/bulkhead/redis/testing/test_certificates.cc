#include "bulkhead/redis/testing/test_certificates.h"

#include <cstdlib>
#include <fstream>

namespace bulkhead {
namespace {

Status Run(const std::string& dir, const std::string& command) {
  std::string full = "cd '" + dir + "' && " + command + " >>openssl.log 2>&1";
  if (std::system(full.c_str()) != 0) {
    return Status::Internal("'" + command + "' failed; see " + dir + "/openssl.log");
  }
  return Status::Ok();
}

Status MakeCa(const std::string& dir, const std::string& name) {
  return Run(dir,
             "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
             "-keyout " +
                 name + ".key -out " + name + ".pem -days 2 -subj '/CN=" + name + "'");
}

}  // namespace

Result<TestCertificates> MakeTestCertificates(const std::string& dir) {
  {
    std::ofstream ext(dir + "/server.ext");
    ext << "subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n";
  }
  for (Status s : {MakeCa(dir, "test-ca"), MakeCa(dir, "other-ca"),
                   Run(dir,
                       "openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 "
                       "-nodes -keyout server.key -out server.csr -subj /CN=localhost"),
                   Run(dir,
                       "openssl x509 -req -in server.csr -CA test-ca.pem -CAkey test-ca.key "
                       "-CAcreateserial -out server.pem -days 2 -extfile server.ext")}) {
    if (!s.ok()) return s;
  }
  return TestCertificates{dir + "/test-ca.pem", dir + "/other-ca.pem", dir + "/server.pem",
                          dir + "/server.key"};
}

}  // namespace bulkhead
