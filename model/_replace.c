/* model._replace: a NamedTuple's `_replace` in C (model/tuples.py's `fast_replace` takes it when
 * it is built and the process is not asked for pure Python).
 *
 * Every transition of both models rebuilds a few states with `_replace`; the Python version,
 * made by exec, runs in the interpreter even when the models are compiled, and costs some
 * 300 to 500 ns a call there, a tenth of a compiled search. This one copies the tuple and sets
 * the named fields: the same type, the same items, so the same hashes and comparisons.
 *
 * Replace(cls) is a method descriptor (Py_TPFLAGS_METHOD_DESCRIPTOR): `x._replace(f=v)` calls it
 * with `x` first and the keyword names in `kwnames`, without making a bound method.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyTypeObject *cls;
    PyObject *fields; /* tuple of str: cls._fields */
} Replace;

static PyObject *
replace_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Replace *self = (Replace *)callable;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (nargs != 1) {
        PyErr_Format(PyExc_TypeError, "_replace() takes 1 positional argument but %zd were given", nargs);
        return NULL;
    }
    PyObject *obj = args[0];
    if (!PyObject_TypeCheck(obj, self->cls)) {
        PyErr_Format(PyExc_TypeError, "_replace() of %s called on a %s", self->cls->tp_name, Py_TYPE(obj)->tp_name);
        return NULL;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(obj);
    Py_ssize_t nfields = PyTuple_GET_SIZE(self->fields);
    /* as tuple's own __new__ makes an instance of a subclass (tuple_subtype_new) */
    PyObject *out = self->cls->tp_alloc(self->cls, n);
    if (out == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PyTuple_GET_ITEM(obj, i);
        Py_INCREF(item);
        PyTuple_SET_ITEM(out, i, item);
    }
    Py_ssize_t nkw = kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames);
    for (Py_ssize_t k = 0; k < nkw; k++) {
        PyObject *name = PyTuple_GET_ITEM(kwnames, k);
        Py_ssize_t at = -1;
        for (Py_ssize_t j = 0; j < nfields; j++) { /* names are interned: identity first */
            if (PyTuple_GET_ITEM(self->fields, j) == name) {
                at = j;
                break;
            }
        }
        if (at < 0) {
            for (Py_ssize_t j = 0; j < nfields; j++) {
                int eq = PyObject_RichCompareBool(PyTuple_GET_ITEM(self->fields, j), name, Py_EQ);
                if (eq < 0) {
                    Py_DECREF(out);
                    return NULL;
                }
                if (eq) {
                    at = j;
                    break;
                }
            }
        }
        if (at < 0 || at >= n) {
            PyErr_Format(PyExc_TypeError, "_replace() got an unexpected keyword argument '%S'", name);
            Py_DECREF(out);
            return NULL;
        }
        PyObject *value = args[nargs + k];
        Py_INCREF(value);
        Py_SETREF(((PyTupleObject *)out)->ob_item[at], value);
    }
    return out;
}

static PyObject *
replace_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    PyObject *cls;
    if (!PyArg_ParseTuple(args, "O!:Replace", &PyType_Type, &cls))
        return NULL;
    if (!PyType_IsSubtype((PyTypeObject *)cls, &PyTuple_Type)) {
        PyErr_SetString(PyExc_TypeError, "Replace() needs a tuple subclass");
        return NULL;
    }
    PyObject *fields = PyObject_GetAttrString(cls, "_fields");
    if (fields == NULL)
        return NULL;
    if (!PyTuple_Check(fields)) {
        Py_DECREF(fields);
        PyErr_SetString(PyExc_TypeError, "Replace() needs a NamedTuple: _fields is not a tuple");
        return NULL;
    }
    Replace *self = (Replace *)type->tp_alloc(type, 0);
    if (self == NULL) {
        Py_DECREF(fields);
        return NULL;
    }
    Py_INCREF(cls);
    self->cls = (PyTypeObject *)cls;
    self->fields = fields;
    self->vectorcall = replace_vectorcall;
    return (PyObject *)self;
}

static int
replace_traverse(Replace *self, visitproc visit, void *arg)
{
    Py_VISIT(self->cls);
    Py_VISIT(self->fields);
    return 0;
}

static int
replace_clear(Replace *self)
{
    Py_CLEAR(self->cls);
    Py_CLEAR(self->fields);
    return 0;
}

static void
replace_dealloc(Replace *self)
{
    PyObject_GC_UnTrack(self);
    replace_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *
replace_descr_get(PyObject *self, PyObject *obj, PyObject *type)
{
    if (obj == NULL || obj == Py_None) {
        Py_INCREF(self);
        return self;
    }
    return PyMethod_New(self, obj);
}

static PyTypeObject ReplaceType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "model._replace.Replace",
    .tp_doc = "Return a new instance of the NamedTuple with the given fields replaced (keyword only).",
    .tp_basicsize = sizeof(Replace),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_new = replace_new,
    .tp_traverse = (traverseproc)replace_traverse,
    .tp_clear = (inquiry)replace_clear,
    .tp_dealloc = (destructor)replace_dealloc,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(Replace, vectorcall),
    .tp_descr_get = replace_descr_get,
};

static struct PyModuleDef module = {
    .m_base = PyModuleDef_HEAD_INIT,
    .m_name = "model._replace",
    .m_doc = "NamedTuple `_replace` in C (model/tuples.py).",
    .m_size = -1,
};

PyMODINIT_FUNC
PyInit__replace(void)
{
    if (PyType_Ready(&ReplaceType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    Py_INCREF(&ReplaceType);
    if (PyModule_AddObject(m, "Replace", (PyObject *)&ReplaceType) < 0) {
        Py_DECREF(&ReplaceType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
