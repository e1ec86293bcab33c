/* The visited set of the exhaustive search: 64-bit fingerprints in one flat open-addressing
 * table (linear probing), 8 bytes a slot, kept between 53% and 85% full, so at most about
 * 15 bytes a distinct state (TLC's FPSet idea). checker/visited.py holds the pure-Python
 * fallback with the same methods, used when this module was not built. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define MAX_LOAD 0.85
#define GROWTH 1.6
#define MIN_CAPACITY 1024

typedef struct {
    PyObject_HEAD
    uint64_t *slots;   /* 0 marks an empty slot; fingerprint 0 is kept in has_zero */
    Py_ssize_t capacity;
    Py_ssize_t count;  /* fingerprints in slots (not counting has_zero) */
    int has_zero;
    uint64_t sum;      /* sum of every fingerprint, mod 2**64: the digest of the set */
} FPSet;

static inline Py_ssize_t home(uint64_t fp, Py_ssize_t capacity) {
    /* Mix (an odd multiplier is a bijection), then map onto [0, capacity) by the high bits. */
    uint64_t h = fp * 0x9E3779B97F4A7C15ULL;
    return (Py_ssize_t)(((__uint128_t)h * (uint64_t)capacity) >> 64);
}

/* 1 if fp was added, 0 if it was there. The table has room (the caller grew it). */
static inline int put(uint64_t *slots, Py_ssize_t capacity, uint64_t fp) {
    Py_ssize_t i = home(fp, capacity);
    for (;;) {
        uint64_t v = slots[i];
        if (v == 0) {
            slots[i] = fp;
            return 1;
        }
        if (v == fp) return 0;
        if (++i == capacity) i = 0;
    }
}

static inline int present(const FPSet *self, uint64_t fp) {
    if (fp == 0) return self->has_zero;
    Py_ssize_t i = home(fp, self->capacity);
    for (;;) {
        uint64_t v = self->slots[i];
        if (v == 0) return 0;
        if (v == fp) return 1;
        if (++i == self->capacity) i = 0;
    }
}

static int resize(FPSet *self, Py_ssize_t capacity) {
    uint64_t *fresh = PyMem_RawCalloc((size_t)capacity, sizeof(uint64_t));
    if (fresh == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < self->capacity; i++) {
        uint64_t v = self->slots[i];
        if (v != 0) put(fresh, capacity, v);
    }
    PyMem_RawFree(self->slots);
    self->slots = fresh;
    self->capacity = capacity;
    return 0;
}

static inline int room_for_one(FPSet *self) {
    if ((double)(self->count + 1) <= MAX_LOAD * (double)self->capacity) return 0;
    return resize(self, (Py_ssize_t)((double)self->capacity * GROWTH) + 1);
}

/* 1 if added, 0 if present, -1 on error. */
static inline int add_one(FPSet *self, uint64_t fp) {
    if (fp == 0) {
        if (self->has_zero) return 0;
        self->has_zero = 1;
        return 1;
    }
    if (present(self, fp)) return 0;
    if (room_for_one(self) < 0) return -1;
    put(self->slots, self->capacity, fp);
    self->count++;
    self->sum += fp;
    return 1;
}

static int FPSet_init(FPSet *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"expected", NULL};
    Py_ssize_t expected = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|n", kwlist, &expected)) return -1;
    Py_ssize_t capacity = (Py_ssize_t)((double)expected / MAX_LOAD) + 1;
    if (capacity < MIN_CAPACITY) capacity = MIN_CAPACITY;
    PyMem_RawFree(self->slots);
    self->slots = PyMem_RawCalloc((size_t)capacity, sizeof(uint64_t));
    if (self->slots == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    self->capacity = capacity;
    self->count = 0;
    self->has_zero = 0;
    self->sum = 0;
    return 0;
}

static void FPSet_dealloc(FPSet *self) {
    PyMem_RawFree(self->slots);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int as_fp(PyObject *o, uint64_t *fp) {
    if (!PyLong_Check(o)) {
        PyErr_SetString(PyExc_TypeError, "a fingerprint is an int");
        return -1;
    }
    *fp = (uint64_t)PyLong_AsUnsignedLongLongMask(o);  /* a negative hash: its two's complement */
    if (*fp == (uint64_t)-1 && PyErr_Occurred()) return -1;
    return 0;
}

static PyObject *FPSet_add(FPSet *self, PyObject *o) {
    uint64_t fp;
    if (as_fp(o, &fp) < 0) return NULL;
    int added = add_one(self, fp);
    if (added < 0) return NULL;
    return PyBool_FromLong(added);
}

static int FPSet_contains(FPSet *self, PyObject *o) {
    uint64_t fp;
    if (as_fp(o, &fp) < 0) return -1;
    return present(self, fp);
}

static Py_ssize_t FPSet_len(FPSet *self) {
    return self->count + self->has_zero;
}

/* insert_batch(fps, pfps, room) -> (mask, pairs, full): for each fingerprint of `fps` (native
 * uint64s), add it if new while fewer than `room` were added (room < 0: no limit). `mask` has a
 * 1 per new one, `pairs` the (fingerprint, parent) uint64 pairs of the new ones, `full` is True
 * when a new fingerprint met no room (the scan stopped there). */
static PyObject *FPSet_insert_batch(FPSet *self, PyObject *args) {
    Py_buffer fps, pfps;
    Py_ssize_t room;
    if (!PyArg_ParseTuple(args, "y*y*n", &fps, &pfps, &room)) return NULL;
    PyObject *result = NULL, *mask = NULL, *pairs = NULL;
    Py_ssize_t n = fps.len / 8;
    if (pfps.len != fps.len) {
        PyErr_SetString(PyExc_ValueError, "fps and pfps differ in length");
        goto done;
    }
    mask = PyBytes_FromStringAndSize(NULL, n);
    pairs = PyBytes_FromStringAndSize(NULL, n * 16);
    if (mask == NULL || pairs == NULL) goto done;
    char *m = PyBytes_AS_STRING(mask);
    uint64_t *out = (uint64_t *)PyBytes_AS_STRING(pairs);
    memset(m, 0, (size_t)n);
    const uint64_t *f = fps.buf, *p = pfps.buf;
    Py_ssize_t added = 0;
    int full = 0;
    for (Py_ssize_t j = 0; j < n; j++) {
        if (present(self, f[j])) continue;
        if (room >= 0 && added >= room) {
            full = 1;
            break;
        }
        if (add_one(self, f[j]) < 0) goto done;
        m[j] = 1;
        out[2 * added] = f[j];
        out[2 * added + 1] = p[j];
        added++;
    }
    if (_PyBytes_Resize(&pairs, added * 16) < 0) goto done;
    result = Py_BuildValue("(OOO)", mask, pairs, full ? Py_True : Py_False);
done:
    Py_XDECREF(mask);
    Py_XDECREF(pairs);
    PyBuffer_Release(&fps);
    PyBuffer_Release(&pfps);
    return result;
}

/* Add every `stride`-th native uint64 of a buffer, from the first; returns how many were new. */
static PyObject *add_strided(FPSet *self, PyObject *arg, Py_ssize_t stride) {
    Py_buffer buf;
    if (PyObject_GetBuffer(arg, &buf, PyBUF_SIMPLE) < 0) return NULL;
    const uint64_t *v = buf.buf;
    Py_ssize_t n = buf.len / (8 * stride), added = 0;
    for (Py_ssize_t j = 0; j < n; j++) {
        int r = add_one(self, v[stride * j]);
        if (r < 0) {
            PyBuffer_Release(&buf);
            return NULL;
        }
        added += r;
    }
    PyBuffer_Release(&buf);
    return PyLong_FromSsize_t(added);
}

/* add_pairs(buffer) -> int: the fingerprint of every (fingerprint, parent) pair of a parent-link
 * file's bytes (a resumed run rebuilds its set this way). */
static PyObject *FPSet_add_pairs(FPSet *self, PyObject *arg) {
    return add_strided(self, arg, 2);
}

/* add_fps(buffer) -> int: every native uint64 fingerprint of a buffer. */
static PyObject *FPSet_add_fps(FPSet *self, PyObject *arg) {
    return add_strided(self, arg, 1);
}

static PyObject *FPSet_digest(FPSet *self, void *closure) {
    return PyLong_FromUnsignedLongLong(self->sum);
}

static PyObject *FPSet_nbytes(FPSet *self, void *closure) {
    return PyLong_FromSsize_t(self->capacity * (Py_ssize_t)sizeof(uint64_t));
}

static PyMethodDef FPSet_methods[] = {
    {"add", (PyCFunction)FPSet_add, METH_O, "add(fp) -> True if fp was new"},
    {"insert_batch", (PyCFunction)FPSet_insert_batch, METH_VARARGS,
     "insert_batch(fps, pfps, room) -> (mask, pairs, full)"},
    {"add_pairs", (PyCFunction)FPSet_add_pairs, METH_O, "add_pairs(buffer) -> fingerprints added"},
    {"add_fps", (PyCFunction)FPSet_add_fps, METH_O, "add_fps(buffer) -> fingerprints added"},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef FPSet_getset[] = {
    {"digest", (getter)FPSet_digest, NULL, "sum of the fingerprints mod 2**64", NULL},
    {"nbytes", (getter)FPSet_nbytes, NULL, "bytes the table holds", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PySequenceMethods FPSet_as_sequence = {
    .sq_length = (lenfunc)FPSet_len,
    .sq_contains = (objobjproc)FPSet_contains,
};

static PyTypeObject FPSetType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "checker._fpset.FPSet",
    .tp_doc = "FPSet(expected=0): a set of 64-bit fingerprints, 8 bytes a slot",
    .tp_basicsize = sizeof(FPSet),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)FPSet_init,
    .tp_dealloc = (destructor)FPSet_dealloc,
    .tp_methods = FPSet_methods,
    .tp_getset = FPSet_getset,
    .tp_as_sequence = &FPSet_as_sequence,
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "checker._fpset", "A compact set of 64-bit fingerprints.", -1, NULL,
};

PyMODINIT_FUNC PyInit__fpset(void) {
    if (PyType_Ready(&FPSetType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
    Py_INCREF(&FPSetType);
    if (PyModule_AddObject(m, "FPSet", (PyObject *)&FPSetType) < 0) {
        Py_DECREF(&FPSetType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
