# `cpack` (in a build folder) builds the Debian package logosdelivery_<version>_<arch>.deb: the
# program, the shared and static library, headers, pkg-config file, man pages, bash completion,
# the systemd unit (packaging/logosdelivery.service) with its user, state in /var/lib/logosdelivery,
# configuration in /etc/logosdelivery/config.toml (packaging/config.toml, a conffile) and the same
# file as an example. Configure with -DCMAKE_BUILD_TYPE=Release for a package to ship.
install(FILES ${CMAKE_SOURCE_DIR}/packaging/logosdelivery.service DESTINATION lib/systemd/system
        COMPONENT package)
# /etc/logosdelivery/config.toml goes into the package only (cmake/package-etc.cmake copies it
# into the package's tree before packaging): an absolute install() destination would also write
# into the real /etc at every `cmake --install`, whatever its --prefix.
set(CPACK_PRE_BUILD_SCRIPTS ${CMAKE_SOURCE_DIR}/cmake/package-etc.cmake)
set(LD_PACKAGE_ETC_CONFIG ${CMAKE_SOURCE_DIR}/packaging/config.toml)
install(FILES ${CMAKE_SOURCE_DIR}/packaging/config.toml ${CMAKE_SOURCE_DIR}/contrib/README.md
              ${CMAKE_SOURCE_DIR}/contrib/grafana/logosdelivery-dashboard.json
              ${CMAKE_SOURCE_DIR}/contrib/prometheus/prometheus.yml
        DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples COMPONENT package)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME logosdelivery)
set(CPACK_PACKAGE_VENDOR "Logos")
set(CPACK_PACKAGE_CONTACT "Logos Delivery maintainers <delivery@logos.co>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Logos Delivery (Waku v2) node and C library")
set(CPACK_PACKAGE_DESCRIPTION
    "logosdelivery is a Waku v2 node (relay, store, filter, lightpush, peer exchange,
nwaku's REST API and Prometheus metrics) that can replace nwaku's wakunode2, with
a status page, a systemd service and commands to send, subscribe and query.
liblogosdelivery is the same stack as a C library.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://github.com/logos-messaging/logos-delivery")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON) # shlibs and the ldconfig trigger
# loaded at run time: libmicrohttpd for REST and metrics, libsqlite3 for the store's default
# archive, libpq for a postgres:// archive, libcurl for the on-chain RLN group
set(CPACK_DEBIAN_PACKAGE_DEPENDS "adduser, libmicrohttpd12, libsqlite3-0, libcurl4")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "libpq5")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${CMAKE_SOURCE_DIR}/packaging/debian/postinst ${CMAKE_SOURCE_DIR}/packaging/debian/prerm
    ${CMAKE_SOURCE_DIR}/packaging/debian/postrm ${CMAKE_SOURCE_DIR}/packaging/debian/conffiles)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_LD_ETC_CONFIG ${LD_PACKAGE_ETC_CONFIG}) # read by cmake/package-etc.cmake
include(CPack)
