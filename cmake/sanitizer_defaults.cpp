// Linked into every target of a SCALEDESK_SANITIZE build: the sanitizers' defaults for processes
// that do not get the test preset's ASAN_OPTIONS (the trainer started by srun in a SLURM job over
// SSH, whose environment is the login shell's). Leak reports are off: libtorch, MPI and Qt keep
// allocations to the end of the process by design; every other ASan and UBSan check stays on, and
// ASAN_OPTIONS / UBSAN_OPTIONS still override these.
extern "C" {
__attribute__((weak)) const char* __asan_default_options() { return "detect_leaks=0:abort_on_error=1:detect_odr_violation=0"; }
__attribute__((weak)) const char* __ubsan_default_options() { return "print_stacktrace=1:halt_on_error=1"; }
}
