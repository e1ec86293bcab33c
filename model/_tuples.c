/* model._tuples: C helpers for the models' NamedTuple states (model/tuples.py takes them when they
 * are built and the process is not asked for pure Python). Both make and read the same tuples as
 * the Python they replace: the same type, the same items, so the same hashes and comparisons.
 *
 * Replace(cls): a NamedTuple's `_replace`. Every transition of both models rebuilds a few states
 * with `_replace`; the Python version, made by exec, runs in the interpreter even when the models
 * are compiled, and cost some 300 to 500 ns a call there, a fifth of a compiled search. It is a
 * method descriptor (Py_TPFLAGS_METHOD_DESCRIPTOR): `x._replace(f=v)` calls it with `x` first and
 * the keyword names in `kwnames`, without making a bound method.
 *
 * fast_fields(cls): reading a field (`broker.hw`) goes through the generic attribute lookup (the
 * type's method cache, then the field's descriptor), a quarter of a compiled search. fast_fields
 * gives `cls` a tp_getattro that finds a field's index by the identity of its interned name among
 * `cls._fields` and returns the item; any other name (a property, a method, a name equal to a
 * field's but not the same object) takes the generic lookup, as before.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyTypeObject *cls;
    PyObject *fields; /* tuple of str: cls._fields */
} Replace;

/* cls._fields (a new reference), or NULL with a TypeError where cls is no NamedTuple class. */
static PyObject *
fields_of(PyObject *cls, const char *who)
{
    if (!PyType_Check(cls) || !PyType_IsSubtype((PyTypeObject *)cls, &PyTuple_Type)) {
        PyErr_Format(PyExc_TypeError, "%s needs a tuple subclass", who);
        return NULL;
    }
    PyObject *fields = PyObject_GetAttrString(cls, "_fields");
    if (fields == NULL)
        return NULL;
    if (!PyTuple_Check(fields)) {
        Py_DECREF(fields);
        PyErr_Format(PyExc_TypeError, "%s needs a NamedTuple: _fields is not a tuple", who);
        return NULL;
    }
    return fields;
}

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
    if (!PyArg_ParseTuple(args, "O:Replace", &cls))
        return NULL;
    PyObject *fields = fields_of(cls, "Replace()");
    if (fields == NULL)
        return NULL;
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
    .tp_name = "model._tuples.Replace",
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

/* ---- fast_fields --------------------------------------------------------------------------- */

/* The registered classes, by the address of their type: open addressing, never removed. */
#define SLOTS 256
#define FIELDS_MAX (SLOTS / 2)

static struct {
    PyTypeObject *type;
    PyObject *fields;
} registry[SLOTS];
static int registered;

static inline size_t
slot_of(PyTypeObject *tp)
{
    return ((uintptr_t)tp >> 6) & (SLOTS - 1);
}

static PyObject *
fields_getattro(PyObject *obj, PyObject *name)
{
    PyTypeObject *tp = Py_TYPE(obj);
    for (size_t at = slot_of(tp); registry[at].type != NULL; at = (at + 1) & (SLOTS - 1)) {
        if (registry[at].type != tp)
            continue;
        PyObject *fields = registry[at].fields;
        Py_ssize_t n = PyTuple_GET_SIZE(fields);
        if (n <= PyTuple_GET_SIZE(obj)) {
            for (Py_ssize_t i = 0; i < n; i++) {
                if (PyTuple_GET_ITEM(fields, i) == name) {
                    PyObject *item = PyTuple_GET_ITEM(obj, i);
                    Py_INCREF(item);
                    return item;
                }
            }
        }
        break;
    }
    return PyObject_GenericGetAttr(obj, name);
}

static PyObject *
fast_fields(PyObject *module, PyObject *cls)
{
    PyObject *fields = fields_of(cls, "fast_fields()");
    if (fields == NULL)
        return NULL;
    PyTypeObject *tp = (PyTypeObject *)cls;
    if (tp->tp_getattro != PyObject_GenericGetAttr && tp->tp_getattro != fields_getattro) {
        Py_DECREF(fields);
        PyErr_Format(PyExc_TypeError, "fast_fields(): %s has its own attribute lookup", tp->tp_name);
        return NULL;
    }
    size_t at = slot_of(tp);
    for (; registry[at].type != NULL; at = (at + 1) & (SLOTS - 1)) {
        if (registry[at].type == tp) { /* again: the fields it was given first stay */
            Py_DECREF(fields);
            Py_INCREF(cls);
            return cls;
        }
    }
    if (registered == FIELDS_MAX) {
        Py_DECREF(fields);
        Py_INCREF(cls);
        return cls; /* full: this one keeps the generic lookup */
    }
    Py_INCREF(cls); /* held for the life of the process, as its getattro points here */
    registry[at].type = tp;
    registry[at].fields = fields;
    registered++;
    tp->tp_getattro = fields_getattro;
    PyType_Modified(tp);
    Py_INCREF(cls);
    return cls;
}

static PyObject *
has_fast_fields(PyObject *module, PyObject *cls)
{
    return PyBool_FromLong(PyType_Check(cls) && ((PyTypeObject *)cls)->tp_getattro == fields_getattro);
}

static PyMethodDef methods[] = {
    {"has_fast_fields", has_fast_fields, METH_O, "Whether the class reads its fields by fast_fields' lookup."},
    {"fast_fields", fast_fields, METH_O,
     "Give a NamedTuple class a C attribute lookup for its fields (the generic one for any other name); returns the class."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    .m_base = PyModuleDef_HEAD_INIT,
    .m_name = "model._tuples",
    .m_doc = "C helpers for the models' NamedTuples (model/tuples.py).",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC
PyInit__tuples(void)
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
