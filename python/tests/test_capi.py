"""The cffi declarations are those of api/hetbatch.h."""
import re

from conftest import source_file

from hetbatch import _capi


def decls(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return {m.group(1): re.sub(r"\s+", " ", m.group(0)) for m in
            re.finditer(r"^[a-z][^;#(]*?\b(hetbatch_[a-z_]+)\([^;]*\);", text, re.M)}


def test_cdef_matches_header():
    header = decls(open(source_file("api", "hetbatch.h")).read())
    cdef = decls(_capi.CDEF)
    assert header and header == cdef
