// Written by the property-test task; see tests/CMakeLists.txt.
