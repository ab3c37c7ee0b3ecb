# `make install` and `make package`: what an installed Trellis is. The command
# (bin/trellis), libtrellis.so with its SONAME, the public headers, a CMake
# package (find_package(trellis) gives trellis::trellis) and a pkg-config
# file; CPack builds the same tree into a Debian package.
include(CMakePackageConfigHelpers)

install(TARGETS trellis RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS trellis_shared EXPORT trellisTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES ${CMAKE_SOURCE_DIR}/include/trellis/trellis.h
              ${CMAKE_SOURCE_DIR}/include/trellis/trellis.hpp
              ${CMAKE_SOURCE_DIR}/include/trellis/error.hpp
              ${CMAKE_SOURCE_DIR}/include/trellis/status.hpp
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/trellis)

set(TRELLIS_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/trellis)
install(EXPORT trellisTargets NAMESPACE trellis:: DESTINATION ${TRELLIS_CMAKE_DIR})
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/trellisConfig.cmake.in
                              ${CMAKE_BINARY_DIR}/trellisConfig.cmake
                              INSTALL_DESTINATION ${TRELLIS_CMAKE_DIR})
# 0.x: a minor release may change the interface.
write_basic_package_version_file(${CMAKE_BINARY_DIR}/trellisConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/trellisConfig.cmake ${CMAKE_BINARY_DIR}/trellisConfigVersion.cmake
        DESTINATION ${TRELLIS_CMAKE_DIR})

# The .pc file finds its prefix from where it lies, so it holds wherever
# `cmake --install --prefix` or the package puts it.
file(RELATIVE_PATH TRELLIS_PC_TO_PREFIX /p/${CMAKE_INSTALL_LIBDIR}/pkgconfig /p)
configure_file(${CMAKE_SOURCE_DIR}/cmake/trellis.pc.in ${CMAKE_BINARY_DIR}/trellis.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/trellis.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# The Debian package: installs under /usr; its dependencies are read off the
# binaries (dpkg-shlibdeps) plus the PostgreSQL server `trellis dev` and
# `trellis demo` start.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME trellis)
set(CPACK_PACKAGE_VENDOR "Trellis")
set(CPACK_PACKAGE_CONTACT "Trellis maintainers <trellis@example.org>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "derived tables kept incrementally up to date inside PostgreSQL")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION database)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "postgresql-15")
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
include(CPack)
