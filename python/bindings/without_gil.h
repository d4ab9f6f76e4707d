// Running emulator work with the GIL released, safely also at interpreter
// shutdown.
#pragma once

#include <Python.h>
#include <unistd.h>

#include <utility>

namespace mtlemu::python {

// Whether the interpreter has begun to shut down.
inline bool PythonIsFinalizing() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsFinalizing() != 0;
#else
  return _Py_IsFinalizing() != 0;
#endif
}

// Runs `work()` with the GIL released and returns what it returns. Should
// the interpreter begin to shut down meanwhile (a launch on a daemon thread
// that outlives the main thread), this thread never goes back to Python: it
// waits for the process to end, as Python parks its own threads. Taking the
// GIL back then would end the thread with pthread_exit from inside a
// destructor, which aborts the whole process.
template <class Work>
auto WithoutGil(Work&& work) {
  PyThreadState* state = PyEval_SaveThread();
  try {
    auto result = std::forward<Work>(work)();
    while (PythonIsFinalizing()) pause();
    PyEval_RestoreThread(state);
    return result;
  } catch (...) {
    while (PythonIsFinalizing()) pause();
    PyEval_RestoreThread(state);
    throw;
  }
}

}  // namespace mtlemu::python
