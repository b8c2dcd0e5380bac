// libsystemc.so defines main() and references sc_main; tilesim has its own main and drives SystemC
// through Engine, so this is never called. sim/CMakeLists.txt forces this object into every link.
// extern "C": how SystemC declares it (sysc/kernel/sc_externs.h).
extern "C" int sc_main(int, char**) { return 1; }
