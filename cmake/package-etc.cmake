# CPack pre-build script (cmake/package.cmake): puts the example configuration at
# /etc/logosdelivery/config.toml in the package's tree (a conffile, packaging/debian/conffiles).
if(NOT CPACK_TEMPORARY_INSTALL_DIRECTORY OR NOT CPACK_LD_ETC_CONFIG)
  message(FATAL_ERROR "package-etc.cmake runs from cpack")
endif()
file(MAKE_DIRECTORY ${CPACK_TEMPORARY_INSTALL_DIRECTORY}/etc/logosdelivery)
file(COPY_FILE ${CPACK_LD_ETC_CONFIG} ${CPACK_TEMPORARY_INSTALL_DIRECTORY}/etc/logosdelivery/config.toml)
