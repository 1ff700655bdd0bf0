#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Is a libcgstats build ABI-compatible with a released one?

Compares two abidw dumps (baseline = the release, new = this build) by the
rules of include/cgstats.h, which abidiff alone cannot tell apart from a
break: a struct whose first member is `sz` may grow at its end. Fails on:
- a released function symbol gone, or moved to another version node (a
  name may gain a new default version if the released one stays, as a
  compatibility version);
- a released function whose return or parameter types changed (a
  function kept under its old name as an alias of a new one is checked
  under both names);
- a released struct member gone, moved, or of another type; a struct that
  shrank; a struct without a leading sz that changed size (it is embedded
  or used in arrays, so its size is part of the ABI);
- a released enumerator gone or renumbered;
- a new symbol put into a version node the release already had (each
  release adds its own node, lib/libcgstats.map).
Usage: abi_compare.py BASELINE.abi NEW.abi
"""
import sys
import xml.etree.ElementTree as ET


def symid(text):
    """"name@@VER", "name@VER" or "name" -> (name, VER or "")."""
    name, _, ver = text.partition("@")
    return name, ver.lstrip("@")


def symkey(name, ver):
    return (name, ver or "")


class Corpus:
    def __init__(self, path):
        root = ET.parse(path).getroot()
        self.soname = root.get("soname")
        self.types = {}
        self.funcs = {}    # (name, version) -> function-decl
        self.symbols = {}  # (name, version) of every defined function
        for el in root.iter():
            tid = el.get("id")
            if tid and el.tag != "elf-symbol":
                self.types[tid] = el
        # A name may have several versions: its default one (@@) and
        # compatibility ones (@) kept for programs linked against an older
        # release whose signature or return values changed (lib/: the
        # CGSI_COMPAT definitions); each is checked on its own.
        for sym in root.iter("elf-symbol"):
            if sym.get("type") == "func-type" and sym.get("is-defined") == "yes":
                self.symbols[(sym.get("name"), sym.get("version") or "")] = \
                    sym.get("is-default-version") != "no"
        # an alias (an old name kept for a renamed function, lib/) is the
        # same function: its signature is checked under each name
        aliases = {}
        for sym in root.iter("elf-symbol"):
            aliases[symkey(sym.get("name"), sym.get("version"))] = [
                symid(a) for a in (sym.get("alias") or "").split(",") if a]
        for fn in root.iter("function-decl"):
            sid = fn.get("elf-symbol-id")
            if sid:
                key = symid(sid)
                self.funcs[key] = fn
                for a in aliases.get(symkey(*key), []):
                    self.funcs.setdefault(a, fn)
        self.structs = {}
        self.enums = {}
        for el in self.types.values():
            name = el.get("name") or ""
            if not name.startswith("cgs_"):
                continue
            if el.tag == "class-decl" and el.get("is-declaration-only") != "yes":
                self.structs[name] = el
            elif el.tag == "enum-decl":
                self.enums[name] = el

    def tname(self, tid, depth=0):
        """A type's spelling, independent of ids and file paths."""
        el = self.types.get(tid)
        if el is None or depth > 20:
            return "?" + str(tid)
        tag = el.tag
        if tag in ("type-decl", "typedef-decl"):
            return el.get("name")
        if tag == "class-decl":
            return ("struct " if el.get("is-struct") == "yes" else "class ") + (
                el.get("name") or "<anon>")
        if tag == "union-decl":
            return "union " + (el.get("name") or "<anon>")
        if tag == "enum-decl":
            return "enum " + (el.get("name") or "<anon>")
        if tag == "pointer-type-def":
            return self.tname(el.get("type-id"), depth + 1) + "*"
        if tag == "qualified-type-def":
            q = " ".join(k for k in ("const", "volatile", "restrict")
                         if el.get(k) == "yes")
            return q + " " + self.tname(el.get("type-id"), depth + 1)
        if tag == "array-type-def":
            return "%s[%s bits]" % (self.tname(el.get("type-id"), depth + 1),
                                    el.get("size-in-bits"))
        if tag == "function-type":
            params = [self.tname(p.get("type-id"), depth + 1)
                      for p in el.findall("parameter")]
            ret = el.find("return")
            return "%s(*)(%s)" % (
                self.tname(ret.get("type-id"), depth + 1) if ret is not None
                else "void", ", ".join(params))
        return tag + ":" + (el.get("name") or "")

    def signature(self, fn):
        params = [self.tname(p.get("type-id")) for p in fn.findall("parameter")
                  if p.get("is-variadic") != "yes"]
        ret = fn.find("return")
        return self.tname(ret.get("type-id")), params

    def members(self, st):
        out = []
        for dm in st.findall("data-member"):
            var = dm.find("var-decl")
            out.append((int(dm.get("layout-offset-in-bits")), var.get("name"),
                        self.tname(var.get("type-id"))))
        return out


def compare(old, new):
    errors = []
    new_names = {}
    for name, ver in new.symbols:
        new_names.setdefault(name, set()).add(ver)
    for name, ver in sorted(old.symbols):
        if name not in new_names:
            errors.append("function %s removed" % name)
        elif (name, ver) not in new.symbols:
            errors.append("function %s moved from node %s to %s" %
                          (name, ver, ", ".join(sorted(new_names[name]))))
    old_nodes = {ver for _, ver in old.symbols}
    for name, ver in sorted(new.symbols):
        if (name, ver) not in old.symbols and ver in old_nodes:
            errors.append("new function %s is in the released node %s: give "
                          "it a node of its own in lib/libcgstats.map" %
                          (name, ver))
    for key, fn in sorted(old.funcs.items()):
        if key not in new.funcs:
            continue  # reported with the symbols
        a, b = old.signature(fn), new.signature(new.funcs[key])
        if a != b:
            errors.append("function %s@%s changed signature: %s(%s) -> "
                          "%s(%s)" % (key[0], key[1], a[0], ", ".join(a[1]),
                                      b[0], ", ".join(b[1])))
    for name, st in sorted(old.structs.items()):
        if name not in new.structs:
            errors.append("struct %s gone (or made opaque)" % name)
            continue
        nst = new.structs[name]
        osz, nsz = int(st.get("size-in-bits")), int(nst.get("size-in-bits"))
        om, nm = old.members(st), new.members(nst)
        growable = bool(om) and om[0][1] == "sz"
        if nsz < osz:
            errors.append("struct %s shrank from %d to %d bits" %
                          (name, osz, nsz))
        elif nsz != osz and not growable:
            errors.append("struct %s changed size (%d -> %d bits) but has "
                          "no leading sz: it may be embedded or in arrays"
                          % (name, osz, nsz))
        nbyname = {m[1]: m for m in nm}
        for off, mname, mtype in om:
            m = nbyname.get(mname)
            if m is None:
                errors.append("struct %s: member %s removed" % (name, mname))
            elif m[0] != off:
                errors.append("struct %s: member %s moved from bit %d to %d"
                              % (name, mname, off, m[0]))
            elif m[2] != mtype:
                errors.append("struct %s: member %s changed type: %s -> %s"
                              % (name, mname, mtype, m[2]))
        old_names = {m[1] for m in om}
        for off, mname, _ in nm:
            if mname not in old_names and off < osz:
                errors.append("struct %s: new member %s at bit %d, inside "
                              "the released struct (append at the end)"
                              % (name, mname, off))
    for name, en in sorted(old.enums.items()):
        nen = new.enums.get(name)
        if nen is None:
            errors.append("enum %s gone" % name)
            continue
        vals = {e.get("name"): e.get("value")
                for e in nen.findall("enumerator")}
        for e in en.findall("enumerator"):
            if vals.get(e.get("name")) != e.get("value"):
                errors.append("enum %s: %s was %s, now %s" %
                              (name, e.get("name"), e.get("value"),
                               vals.get(e.get("name"))))
    return errors


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    old, new = Corpus(sys.argv[1]), Corpus(sys.argv[2])
    if old.soname != new.soname:
        print("abi: SONAME %s -> %s: a new major, nothing to compare" %
              (old.soname, new.soname))
        return 0
    errors = compare(old, new)
    for e in errors:
        print("abi: INCOMPATIBLE: " + e)
    added = sorted("%s@%s" % k for k in set(new.symbols) - set(old.symbols))
    print("abi: %s: %d released functions, %d structs, %d enums checked; "
          "%d functions added%s; %d incompatible changes" %
          (new.soname, len(old.symbols), len(old.structs), len(old.enums),
           len(added), (" (" + ", ".join(added) + ")") if added else "",
           len(errors)))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
