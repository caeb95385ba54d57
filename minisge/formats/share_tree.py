"""share_tree(5): the share tree (``qconf -sstree``/``-Astree``/``-Mstree``, ``qconf -sst``).

The classic file is a flat list of nodes, the root first, each node five
``key=value`` lines; a node names its children by id::

    id=0
    name=Root
    type=0
    shares=1
    childnodes=1,2
    id=1
    name=alice
    type=0
    shares=75
    childnodes=NONE

A leaf names a user or a project (a project node's children are users whose
jobs run under that project); the special leaf ``default`` stands for every
user the tree does not name.  ``qconf -sst`` prints the tree indented::

    Root=1
       alice=75
       bob=25

>>> t = parse("id=0\\nname=Root\\ntype=0\\nshares=1\\nchildnodes=1\\n"
...           "id=1\\nname=alice\\ntype=0\\nshares=75\\nchildnodes=NONE\\n")
>>> print(indented(t), end="")
Root=1
   alice=75
>>> write(t).splitlines()[4:]
['childnodes=1', 'id=1', 'name=alice', 'type=0', 'shares=75', 'childnodes=NONE']
"""

from __future__ import annotations

from collections.abc import Iterator

import attrs

from minisge.formats.errors import FormatError

KEYS = ("id", "name", "type", "shares", "childnodes")
MAX_ULONG = 2**32 - 1


@attrs.frozen
class ShareTreeNode:
    """One node: its id (for the file only), name, type (0), shares, and its children's ids."""

    id: int
    name: str
    shares: int
    children: tuple[int, ...] = ()
    type: int = 0


@attrs.frozen
class ShareTree:
    """The nodes in file order, the root first."""

    nodes: tuple[ShareTreeNode, ...]

    @property
    def root(self) -> ShareTreeNode:
        return self.nodes[0]

    def by_id(self) -> dict[int, ShareTreeNode]:
        return {n.id: n for n in self.nodes}

    def walk(self) -> Iterator[tuple[int, ShareTreeNode, tuple[str, ...]]]:
        """(depth, node, names of its ancestors from the root) for every node, depth first."""
        ids = self.by_id()

        def visit(node: ShareTreeNode, depth: int, path: tuple[str, ...]) -> Iterator[
                tuple[int, ShareTreeNode, tuple[str, ...]]]:
            yield depth, node, path
            for c in node.children:
                yield from visit(ids[c], depth + 1, (*path, node.name))

        yield from visit(self.root, 0, ())


def _ulong(key: str, value: str, path: str, lineno: int) -> int:
    if not value.isdigit() or int(value) > MAX_ULONG:
        raise FormatError(f'invalid value "{value}" for "{key}"', path, lineno)
    return int(value)


def parse(text: str, path: str = "<input>") -> ShareTree:
    """A share tree file as ``qconf -Astree`` reads it: every node has all
    five keys, ids are unique, every child id names a node, every node but
    the root is the child of exactly one node, and the tree has no cycle."""
    records: list[dict[str, tuple[str, int]]] = []
    for lineno, raw in enumerate(text.splitlines(), 1):
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            continue
        key, sep, value = stripped.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or key not in KEYS:
            raise FormatError(f'unknown attribute "{key}" in share tree', path, lineno)
        if key == "id":
            records.append({})
        elif not records:
            raise FormatError('share tree node does not start with "id"', path, lineno)
        if key in records[-1]:
            raise FormatError(f'attribute "{key}" given twice for one node', path, lineno)
        records[-1][key] = (value, lineno)
    if not records:
        raise FormatError("no share tree node", path, 0)
    nodes = []
    for rec in records:
        line: int = rec["id"][1]
        for key in KEYS:
            if key not in rec:
                raise FormatError(f'share tree node misses "{key}"', path, line)
        children: tuple[int, ...] = ()
        kids, kline = rec["childnodes"]
        if kids.upper() != "NONE":
            children = tuple(_ulong("childnodes", c.strip(), path, kline) for c in kids.split(","))
        name, nline = rec["name"]
        if not name or any(ch in name for ch in " \t/=,"):
            raise FormatError(f'invalid node name "{name}"', path, nline)
        nodes.append(ShareTreeNode(
            id=_ulong("id", rec["id"][0], path, line), name=name,
            shares=_ulong("shares", rec["shares"][0], path, rec["shares"][1]), children=children,
            type=_ulong("type", rec["type"][0], path, rec["type"][1])))
    tree = ShareTree(tuple(nodes))
    check(tree, path)
    return tree


def check(tree: ShareTree, path: str = "<input>") -> None:
    """The structure rules of :func:`parse` (ids, children, one parent each, no cycle)."""
    ids: dict[int, ShareTreeNode] = {}
    for n in tree.nodes:
        if n.id in ids:
            raise FormatError(f"share tree node id {n.id} given twice", path, 0)
        ids[n.id] = n
    parent: dict[int, int] = {}
    for n in tree.nodes:
        names: set[str] = set()
        for c in n.children:
            if c not in ids:
                raise FormatError(f'share tree node "{n.name}" names an unknown child id {c}', path, 0)
            if c in parent or c == tree.root.id:
                raise FormatError(f"share tree node id {c} has more than one parent", path, 0)
            parent[c] = n.id
            if ids[c].name in names:
                raise FormatError(f'share tree node "{n.name}" has two children named "{ids[c].name}"', path, 0)
            names.add(ids[c].name)
    orphans = [n.name for n in tree.nodes if n.id != tree.root.id and n.id not in parent]
    if orphans:
        raise FormatError(f'share tree node "{orphans[0]}" is not reachable from the root', path, 0)


def write(tree: ShareTree) -> str:
    """The text ``qconf -sstree`` prints (and the spool file ``sharetree`` holds)."""
    out = []
    for n in tree.nodes:
        kids = ",".join(str(c) for c in n.children) if n.children else "NONE"
        out.append(f"id={n.id}\nname={n.name}\ntype={n.type}\nshares={n.shares}\nchildnodes={kids}\n")
    return "".join(out)


def indented(tree: ShareTree) -> str:
    """``qconf -sst``: one ``name=shares`` line per node, three spaces per level."""
    return "".join(f"{'   ' * depth}{n.name}={n.shares}\n" for depth, n, _path in tree.walk())



def locate(tree: ShareTree, path: str) -> ShareTreeNode | None:
    """The node at ``node_path`` (sge_types(1): ``[/]node_name[[/.]node_name...]``,
    names from below the root) as ``qconf -astnode/-mstnode/-dstnode`` find it;
    None when a name is missing.  The root itself has no path (``/`` is not found)."""
    names = [n for n in path.replace(".", "/").split("/")]
    if names and names[0] == "":
        names = names[1:]
    if not names or "" in names:
        return None
    ids = tree.by_id()
    node = tree.root
    for name in names:
        found = [ids[c] for c in node.children if ids[c].name == name]
        if not found:
            return None
        node = found[0]
    return node


def parent_path(path: str) -> str:
    """``/a/b`` -> ``/a``; ``/a`` -> ``""`` (the root)."""
    cut = max(path.rfind("/"), path.rfind("."))
    return path[:cut] if cut > 0 else ""


def with_shares(tree: ShareTree, node_id: int, shares: int) -> ShareTree:
    """The tree with node ``node_id``'s shares changed (``-astnode``/``-mstnode`` on a node there is)."""
    return ShareTree(tuple(attrs.evolve(n, shares=shares) if n.id == node_id else n for n in tree.nodes))


def with_child(tree: ShareTree, parent_id: int, name: str, shares: int) -> ShareTree:
    """The tree with a new leaf ``name`` under ``parent_id`` (``-astnode``), at the end of the file."""
    new_id = max(n.id for n in tree.nodes) + 1
    nodes = [attrs.evolve(n, children=(*n.children, new_id)) if n.id == parent_id else n for n in tree.nodes]
    return ShareTree((*nodes, ShareTreeNode(new_id, name, shares)))


def without_node(tree: ShareTree, node_id: int) -> ShareTree:
    """The tree without node ``node_id`` and the nodes below it (``-dstnode``)."""
    ids = tree.by_id()
    gone: set[int] = set()
    todo = [node_id]
    while todo:
        nid = todo.pop()
        gone.add(nid)
        todo.extend(ids[nid].children)
    return ShareTree(tuple(attrs.evolve(n, children=tuple(c for c in n.children if c not in gone))
                           for n in tree.nodes if n.id not in gone))
