# Test suites, all driven by CTest. Labels: unit, integration, fuzz, interop, style.
enable_testing()
pkg_check_modules(CMOCKA REQUIRED IMPORTED_TARGET cmocka)
# GMP is the oracle of the zk layer's field tests (tests/unit/zk); the library never links it.
pkg_check_modules(GMP REQUIRED IMPORTED_TARGET gmp)

file(GLOB LD_TEST_SUPPORT_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tests/support/*.c)
add_library(ld_testsupport STATIC ${LD_TEST_SUPPORT_SOURCES} ${CMAKE_SOURCE_DIR}/tests/support/empty.c)
target_include_directories(ld_testsupport PUBLIC ${CMAKE_SOURCE_DIR}/tests/support)
target_link_libraries(ld_testsupport PUBLIC ld_app ld_static PkgConfig::CMOCKA PkgConfig::LD_PQ
                                            PkgConfig::LD_SQLITE)

# tests/unit/<layer>/test_<module>.c → executable unit_<layer>_<module>, test unit/<layer>/<module>
file(GLOB_RECURSE LD_UNIT_TESTS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tests/unit/*.c)
foreach(src ${LD_UNIT_TESTS})
  file(RELATIVE_PATH rel ${CMAKE_SOURCE_DIR}/tests/unit ${src})
  string(REGEX REPLACE "\\.c$" "" rel ${rel})
  string(REPLACE "test_" "" rel ${rel})
  string(REPLACE "/" "_" exe ${rel})
  add_executable(unit_${exe} ${src})
  target_link_libraries(unit_${exe} PRIVATE ld_testsupport)
  if(rel MATCHES "^zk/")
    target_link_libraries(unit_${exe} PRIVATE PkgConfig::GMP)
  endif()
  add_test(NAME unit/${rel} COMMAND unit_${exe})
  set_tests_properties(unit/${rel} PROPERTIES LABELS unit TIMEOUT 300)
endforeach()

# tests/integration/test_<name>.c → integration/<name>
file(GLOB LD_INTEGRATION_TESTS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tests/integration/test_*.c)
foreach(src ${LD_INTEGRATION_TESTS})
  get_filename_component(name ${src} NAME_WE)
  string(REPLACE "test_" "" name ${name})
  add_executable(integration_${name} ${src})
  target_link_libraries(integration_${name} PRIVATE ld_testsupport)
  add_test(NAME integration/${name} COMMAND integration_${name})
  set_tests_properties(integration/${name} PROPERTIES LABELS integration TIMEOUT 600
                       ENVIRONMENT "LD_BIN=$<TARGET_FILE:logosdelivery>;LD_SOURCE_DIR=${CMAKE_SOURCE_DIR}")
endforeach()

# fuzz/<parser>.c: a libFuzzer entry point. Without LD_LIBFUZZER it is linked with a replay driver
# and CTest replays fuzz/corpus/<parser>/ through it (under the sanitizers when LD_SANITIZE is on).
file(GLOB LD_FUZZ_TARGETS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/fuzz/*.c)
list(FILTER LD_FUZZ_TARGETS EXCLUDE REGEX "replay_main\\.c$")
foreach(src ${LD_FUZZ_TARGETS})
  get_filename_component(name ${src} NAME_WE)
  if(LD_LIBFUZZER)
    add_executable(fuzz_${name} ${src})
    target_compile_options(fuzz_${name} PRIVATE -fsanitize=fuzzer)
    target_link_options(fuzz_${name} PRIVATE -fsanitize=fuzzer)
  else()
    add_executable(fuzz_${name} ${src} ${CMAKE_SOURCE_DIR}/fuzz/replay_main.c)
  endif()
  target_link_libraries(fuzz_${name} PRIVATE ld_static)
  if(NOT LD_LIBFUZZER)
    add_test(NAME fuzz/${name} COMMAND fuzz_${name} ${CMAKE_SOURCE_DIR}/fuzz/corpus/${name})
  else()
    add_test(NAME fuzz/${name} COMMAND fuzz_${name} -runs=0 ${CMAKE_SOURCE_DIR}/fuzz/corpus/${name})
  endif()
  set_tests_properties(fuzz/${name} PROPERTIES LABELS fuzz TIMEOUT 600)
endforeach()

# tests/interop/peer/*.c: ld_testpeer, the C side of the interop tests (listen/dial, echo).
file(GLOB LD_TESTPEER_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tests/interop/peer/*.c)
set(LD_INTEROP_ENV "LD_BIN=$<TARGET_FILE:logosdelivery>")
if(LD_TESTPEER_SOURCES)
  add_executable(ld_testpeer ${LD_TESTPEER_SOURCES})
  target_link_libraries(ld_testpeer PRIVATE ld_static)
  list(APPEND LD_INTEROP_ENV "LD_TESTPEER=$<TARGET_FILE:ld_testpeer>")
endif()

# tests/interop/sdstool/sdstool.c: ld_sdstool, src/channels/ (SDS codec, bloom filter, engine) on
# stdin/stdout for sds.test.mjs, which compares it with js-waku's @waku/sds.
if(EXISTS ${CMAKE_SOURCE_DIR}/tests/interop/sdstool/sdstool.c)
  add_executable(ld_sdstool ${CMAKE_SOURCE_DIR}/tests/interop/sdstool/sdstool.c)
  target_link_libraries(ld_sdstool PRIVATE ld_static)
  list(APPEND LD_INTEROP_ENV "LD_SDSTOOL=$<TARGET_FILE:ld_sdstool>")
endif()

# tests/interop/zkverify: ld_zkverify, the C verifier the RLN-v2 interop test feeds zerokit's proofs.
# LD_RLN_FIXTURES: the RLN-v2 proving key, verifying key and witness calculator
# (tests/interop/fixtures/rln-v2 by default).
set(LD_RLN_FIXTURES "${CMAKE_SOURCE_DIR}/tests/interop/fixtures/rln-v2" CACHE PATH
    "Folder with the RLN-v2 rln_final.zkey used by the interop tests")
if(EXISTS ${CMAKE_SOURCE_DIR}/tests/interop/zkverify/ld_zkverify.c)
  add_executable(ld_zkverify ${CMAKE_SOURCE_DIR}/tests/interop/zkverify/ld_zkverify.c)
  target_link_libraries(ld_zkverify PRIVATE ld_static)
  list(APPEND LD_INTEROP_ENV "LD_ZKVERIFY=$<TARGET_FILE:ld_zkverify>")
endif()
# tests/interop/zkprove: ld_zkprove, the C prover (witness and proofs) the RLN-v2 interop test checks
# against the circom witness calculator and zerokit's verifier.
if(EXISTS ${CMAKE_SOURCE_DIR}/tests/interop/zkprove/ld_zkprove.c)
  add_executable(ld_zkprove ${CMAKE_SOURCE_DIR}/tests/interop/zkprove/ld_zkprove.c)
  target_link_libraries(ld_zkprove PRIVATE ld_static)
  list(APPEND LD_INTEROP_ENV "LD_ZKPROVE=$<TARGET_FILE:ld_zkprove>")
endif()
list(APPEND LD_INTEROP_ENV "LD_RLN_FIXTURES=${LD_RLN_FIXTURES}")
# Where suites leave what a person looks at afterwards (the status page's screenshots).
list(APPEND LD_INTEROP_ENV "LD_BUILD_DIR=${CMAKE_BINARY_DIR}")

# tests/interop/*.test.mjs: node's test runner against real js-libp2p peers from npm.
find_program(LD_NODE node)
file(GLOB LD_INTEROP_TESTS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tests/interop/*.test.mjs)
foreach(src ${LD_INTEROP_TESTS})
  get_filename_component(name ${src} NAME)
  string(REGEX REPLACE "\\.test\\.mjs$" "" name ${name})
  add_test(NAME interop/${name} COMMAND ${LD_NODE} --test ${src}
           WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}/tests/interop)
  set_tests_properties(interop/${name} PROPERTIES LABELS interop TIMEOUT 900
                       ENVIRONMENT "${LD_INTEROP_ENV}")
endforeach()

# tests/rlnchain/*.test.mjs: the on-chain RLN group against a local chain (ganache) and a contract
# compiled by solc, both from npm in their own package (tests/rlnchain/package.json).
file(GLOB LD_RLNCHAIN_TESTS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tests/rlnchain/*.test.mjs)
foreach(src ${LD_RLNCHAIN_TESTS})
  get_filename_component(name ${src} NAME)
  string(REGEX REPLACE "\\.test\\.mjs$" "" name ${name})
  add_test(NAME interop/rlnchain-${name} COMMAND ${LD_NODE} --test ${src}
           WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}/tests/rlnchain)
  set_tests_properties(interop/rlnchain-${name} PROPERTIES LABELS interop TIMEOUT 900
                       ENVIRONMENT "${LD_INTEROP_ENV}")
endforeach()

add_test(NAME style/clang-format COMMAND bash ${CMAKE_SOURCE_DIR}/scripts/check-format.sh
         WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
set_tests_properties(style/clang-format PROPERTIES LABELS style)

# The include layering of ARCHITECTURE.md (scripts/check-layers.sh, exceptions in
# scripts/layering-allowlist.txt), and the check itself on trees that break it.
add_test(NAME style/layering COMMAND bash ${CMAKE_SOURCE_DIR}/scripts/check-layers.sh
         WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
add_test(NAME style/layering-check
         COMMAND bash ${CMAKE_SOURCE_DIR}/tests/scripts/check_layers_test.sh ${CMAKE_SOURCE_DIR})
set_tests_properties(style/layering style/layering-check PROPERTIES LABELS style)

# examples/: installed with `cmake --install`, the C chat built through pkg-config, and the C and
# Python (ctypes) chats exchanging messages.
add_test(NAME examples/chat
         COMMAND bash ${CMAKE_SOURCE_DIR}/tests/examples/chat_test.sh ${CMAKE_BINARY_DIR}
                 ${CMAKE_SOURCE_DIR} ${LD_SANITIZE})
set_tests_properties(examples/chat PROPERTIES LABELS integration TIMEOUT 300)

# ---- tests/interop/libnode: ld_libnode, one library context driven through the public C API ------
# Built from the installed headers only and linked against the shared library (ld_shared), so it
# sees exactly what an application sees. Every interop suite gets its path as LD_LIBNODE
# (library.test.mjs uses it).
if(EXISTS ${CMAKE_SOURCE_DIR}/tests/interop/libnode/libnode.c)
  add_executable(ld_libnode ${CMAKE_SOURCE_DIR}/tests/interop/libnode/libnode.c)
  target_include_directories(ld_libnode PRIVATE ${CMAKE_SOURCE_DIR}/include)
  target_link_libraries(ld_libnode PRIVATE ld_shared pthread)
  foreach(src ${LD_INTEROP_TESTS})
    get_filename_component(name ${src} NAME)
    string(REGEX REPLACE "\\.test\\.mjs$" "" name ${name})
    set_property(TEST interop/${name} APPEND PROPERTY ENVIRONMENT
                 "LD_LIBNODE=$<TARGET_FILE:ld_libnode>")
  endforeach()
  # tests/rlnchain/library.test.mjs: the library's RLN settings against the local chain
  foreach(src ${LD_RLNCHAIN_TESTS})
    get_filename_component(name ${src} NAME)
    string(REGEX REPLACE "\\.test\\.mjs$" "" name ${name})
    set_property(TEST interop/rlnchain-${name} APPEND PROPERTY ENVIRONMENT
                 "LD_LIBNODE=$<TARGET_FILE:ld_libnode>")
  endforeach()
endif()

# ---- the zk unit tests that read the RLN-v2 circuit files (proving key, witness graph) ----------
foreach(t unit/zk/prover unit/waku/rln/validator)
  if(TEST ${t})
    set_tests_properties(${t} PROPERTIES ENVIRONMENT "LD_RLN_FIXTURES=${LD_RLN_FIXTURES}")
  endif()
endforeach()

# integration/rln_relay: the node's RLN-relay proves with the circuit's files.
if(TEST integration/rln_relay)
  set_property(TEST integration/rln_relay APPEND PROPERTY ENVIRONMENT
               "LD_RLN_FIXTURES=${LD_RLN_FIXTURES}")
endif()

# contrib/grafana: every query of the dashboard against the metric families a running node exports.
find_program(LD_PYTHON3 python3)
if(LD_PYTHON3)
  add_test(NAME integration/grafana_dashboard
           COMMAND ${LD_PYTHON3} ${CMAKE_SOURCE_DIR}/tests/scripts/grafana_dashboard_test.py
                   $<TARGET_FILE:logosdelivery>
                   ${CMAKE_SOURCE_DIR}/contrib/grafana/logosdelivery-dashboard.json)
  set_tests_properties(integration/grafana_dashboard PROPERTIES LABELS integration TIMEOUT 120)
endif()

# man/ and the generated logosdelivery(1) and bash completion (CMakeLists.txt, ld_docs).
add_test(NAME integration/man_pages
         COMMAND bash ${CMAKE_SOURCE_DIR}/tests/scripts/man_pages_test.sh ${CMAKE_BINARY_DIR}
                 ${CMAKE_SOURCE_DIR})
set_tests_properties(integration/man_pages PROPERTIES LABELS integration TIMEOUT 60)

# packaging/: the Debian package built by cpack, checked, installed, run and purged (skipped, 77,
# where installing is not safe: see the script).
add_test(NAME integration/package
         COMMAND bash ${CMAKE_SOURCE_DIR}/tests/scripts/package_test.sh ${CMAKE_BINARY_DIR})
set_tests_properties(integration/package PROPERTIES LABELS integration TIMEOUT 900
                     SKIP_RETURN_CODE 77 RUN_SERIAL TRUE)

# Optional libraries (libsqlite3, libmicrohttpd, libpq) are mapped only with their feature on.
add_test(NAME integration/lazy_libraries
         COMMAND bash ${CMAKE_SOURCE_DIR}/tests/scripts/lazy_libraries_test.sh
                 $<TARGET_FILE:logosdelivery>)
set_tests_properties(integration/lazy_libraries PROPERTIES LABELS integration TIMEOUT 120)

# ---- tests/churn: the churn test in network namespaces made by the test itself ------------------
# Short form: 8 nodes, 4 publishers, 2 restart rounds and a cut-off node per round under p2p
# reliability, about 2.5 minutes. Exits 77 (skipped, saying why) where namespaces cannot be made;
# the full form (20 nodes, 10 minutes) runs by hand (tests/churn/README.md).
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  add_test(NAME churn/short
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/tests/churn/churn.py
                   --bin $<TARGET_FILE:logosdelivery> --nodes 8 --publishers 4 --period 30
                   --duration 60 --partition 15)
  set_tests_properties(churn/short PROPERTIES LABELS integration TIMEOUT 600 SKIP_RETURN_CODE 77)
endif()

# integration/rln_lightpush, integration/store_sync, integration/nrs: RLN-relay nodes and messages
# proved with the circuit's files.
foreach(t integration/rln_lightpush integration/store_sync integration/nrs)
  if(TEST ${t})
    set_property(TEST ${t} APPEND PROPERTY ENVIRONMENT "LD_RLN_FIXTURES=${LD_RLN_FIXTURES}")
  endif()
endforeach()

# integration/rln_proving_ctx, unit/zk/prover_ctx: proofs through a proving context.
foreach(t integration/rln_proving_ctx unit/zk/prover_ctx)
  if(TEST ${t})
    set_property(TEST ${t} APPEND PROPERTY ENVIRONMENT "LD_RLN_FIXTURES=${LD_RLN_FIXTURES}")
  endif()
endforeach()

# unit/waku/rln/batch: the batched RLN validator on messages proved with the circuit's files.
if(TEST unit/waku/rln/batch)
  set_tests_properties(unit/waku/rln/batch PROPERTIES ENVIRONMENT "LD_RLN_FIXTURES=${LD_RLN_FIXTURES}")
endif()

# integration/channels_rln: reliable channels paced by real RLN-relay members' budget.
if(TEST integration/channels_rln)
  set_property(TEST integration/channels_rln APPEND PROPERTY ENVIRONMENT
               "LD_RLN_FIXTURES=${LD_RLN_FIXTURES}")
endif()

# tests/interop/bench/sds-loss.test.mjs: the short form of bench/sds-loss.mjs (js-waku's
# ReliableChannel on a simulated clock and a lossy in-memory wire), checking the harness behind
# the figure in bench/RESULTS.md. No network.
if(EXISTS ${CMAKE_SOURCE_DIR}/tests/interop/bench/sds-loss.test.mjs)
  add_test(NAME interop/bench-sds-loss
           COMMAND ${LD_NODE} --test ${CMAKE_SOURCE_DIR}/tests/interop/bench/sds-loss.test.mjs
           WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}/tests/interop)
  set_tests_properties(interop/bench-sds-loss PROPERTIES LABELS interop TIMEOUT 300)
endif()

# integration/rln_publish_queue: the RLN publish queue's outcomes and timestamps, with real proofs.
if(TEST integration/rln_publish_queue)
  set_property(TEST integration/rln_publish_queue APPEND PROPERTY ENVIRONMENT
               "LD_RLN_FIXTURES=${LD_RLN_FIXTURES}")
endif()

# integration/lib_kernel: relayPublish with RLN-relay proves with the circuit's files.
if(TEST integration/lib_kernel)
  set_property(TEST integration/lib_kernel APPEND PROPERTY ENVIRONMENT
               "LD_RLN_FIXTURES=${LD_RLN_FIXTURES}")
endif()
