"""The cluster: homogeneous, node groups, TOML files and their errors.

Every error must name the file (for TOML), the node group and the field.
"""

from __future__ import annotations

import numpy as np
import pytest

from fitgpp import DEFAULT_CLUSTER, Cluster, ClusterError, FitgppError, NodeGroup

GOOD = """\
# two kinds of node; ids follow file order
[[nodes]]
count = 2
gpu = 8
cpu_milli = 96000
mem_mib = 786432
name = "dgx"

[[nodes]]
count = 3
gpu = 0
cpu_milli = 32000
mem_mib = 131072
"""

GROUP = {"count": 2, "gpu": 8, "cpu_milli": 96000, "mem_mib": 786432}


def toml(tmp_path, text, name="c.toml"):
    p = tmp_path / name
    p.write_text(text)
    return p


def group_toml(**fields):
    lines = ["[[nodes]]"] + [f"{k} = {v}" for k, v in {**GROUP, **fields}.items() if v is not None]
    return "\n".join(lines) + "\n"


def rejects(path, *needles):
    with pytest.raises(ClusterError) as info:
        Cluster.from_toml(path)
    msg = str(info.value)
    assert str(path) in msg, msg
    for n in needles:
        assert n in msg, msg
    assert "\n" not in msg
    return msg


# ------------------------------------------------------------------ good clusters

def test_homogeneous():
    cl = Cluster.homogeneous(3, gpu=4, cpu_milli=1000, mem_mib=2048)
    assert cl.n_nodes == 3 and cl.total_gpus == 12
    assert cl.capacity.tolist() == [[4, 1000, 2048]] * 3
    assert cl.capacity.dtype == np.int64
    assert cl.describe() == "3x(4 GPU, 1000 mCPU, 2048 MiB)"


def test_default_cluster_is_16_nodes_of_8_gpus():
    assert DEFAULT_CLUSTER.n_nodes == 16 and DEFAULT_CLUSTER.total_gpus == 128


def test_groups_give_node_ids_in_order():
    cl = Cluster.from_groups([{"count": 1, "gpu": 2, "cpu_milli": 10, "mem_mib": 10},
                              {"count": 2, "gpu": 8, "cpu_milli": 20, "mem_mib": 30}])
    assert cl.capacity.tolist() == [[2, 10, 10], [8, 20, 30], [8, 20, 30]]
    assert cl.total_gpus == 18


def test_fits_some_node_is_per_node():
    cl = Cluster.from_groups([{"count": 1, "gpu": 8, "cpu_milli": 1000, "mem_mib": 100},
                              {"count": 1, "gpu": 1, "cpu_milli": 9000, "mem_mib": 100}])
    demand = np.array([[8, 1000, 100], [1, 9000, 100], [8, 9000, 100], [0, 0, 101]])
    assert cl.fits_some_node(demand).tolist() == [True, True, False, False]


def test_good_toml(tmp_path):
    cl = Cluster.from_toml(toml(tmp_path, GOOD))
    assert cl.n_nodes == 5 and cl.total_gpus == 16
    assert cl.capacity.tolist() == [[8, 96000, 786432]] * 2 + [[0, 32000, 131072]] * 3
    assert cl.groups[0].name == "dgx" and cl.groups[1].name == ""


def test_json_round_trip(tmp_path):
    cl = Cluster.from_toml(toml(tmp_path, GOOD))
    back = Cluster.from_json(cl.to_json())
    assert back == cl
    assert Cluster.from_json(DEFAULT_CLUSTER.to_json()) == DEFAULT_CLUSTER


def test_cluster_is_frozen():
    with pytest.raises(AttributeError):
        DEFAULT_CLUSTER.groups = ()


# ------------------------------------------------------------------ TOML errors

def test_unknown_field(tmp_path):
    rejects(toml(tmp_path, group_toml(gpus=3)), "node group #1", "gpus", "unknown")


def test_unknown_top_level_key(tmp_path):
    rejects(toml(tmp_path, "nodez = 1\n" + group_toml()), "unknown key", "nodez")


@pytest.mark.parametrize("field", ["count", "gpu", "cpu_milli", "mem_mib"])
def test_missing_field(tmp_path, field):
    rejects(toml(tmp_path, group_toml(**{field: None})), "node group #1", "missing", field)


def test_second_group_is_named(tmp_path):
    text = group_toml() + group_toml(mem_mib=-5, name='"small"')
    rejects(toml(tmp_path, text), "node group #2", "'small'", "'mem_mib'", ">= 0", "-5")


@pytest.mark.parametrize("field", ["gpu", "cpu_milli", "mem_mib"])
def test_negative(tmp_path, field):
    rejects(toml(tmp_path, group_toml(**{field: -1})), "node group #1", f"'{field}'", ">= 0")


@pytest.mark.parametrize("count", [0, -2])
def test_count_at_least_one(tmp_path, count):
    rejects(toml(tmp_path, group_toml(count=count)), "node group #1", "'count'", ">= 1")


@pytest.mark.parametrize("field", ["count", "gpu", "cpu_milli", "mem_mib"])
@pytest.mark.parametrize("value", ["8.5", "8.0", '"8"', "inf"])
def test_non_integer(tmp_path, field, value):
    rejects(toml(tmp_path, group_toml(**{field: value})), "node group #1", f"'{field}'",
            "must be an integer")


@pytest.mark.parametrize("field", ["count", "gpu"])
def test_bool(tmp_path, field):
    rejects(toml(tmp_path, group_toml(**{field: "true"})), "node group #1", f"'{field}'",
            "must be an integer", "True")


def test_no_capacity(tmp_path):
    rejects(toml(tmp_path, group_toml(gpu=0, cpu_milli=0, mem_mib=0)), "node group #1",
            "no capacity")


@pytest.mark.parametrize("text", ["", "# only a comment\n", "[nodes]\ncount = 1\n",
                                  "nodes = 3\n"])
def test_empty_or_no_node_tables(tmp_path, text):
    rejects(toml(tmp_path, text), "[[nodes]]")


def test_empty_node_list(tmp_path):
    rejects(toml(tmp_path, "nodes = []\n"), "no nodes")


def test_node_entry_not_a_table(tmp_path):
    rejects(toml(tmp_path, "nodes = [1, 2]\n"), "node group #1", "expected a table")


def test_bad_toml_syntax(tmp_path):
    rejects(toml(tmp_path, "[[nodes]\ncount = 2\n"), "not valid TOML", "line 1")


def test_missing_file(tmp_path):
    rejects(tmp_path / "nope.toml", "no such file")


def test_directory(tmp_path):
    rejects(tmp_path, "directory")


def test_binary_file(tmp_path):
    p = tmp_path / "c.toml"
    p.write_bytes(b"\xff\xfe\x00garbage")
    rejects(p, "UTF-8")


# ------------------------------------------------------------------ Python constructors

@pytest.mark.parametrize("kwargs, needle", [
    ({"nodes": 0}, "'count'"), ({"nodes": 2, "gpu": -1}, "'gpu'"),
    ({"nodes": 2, "cpu_milli": 1.5}, "'cpu_milli'"), ({"nodes": True}, "'count'"),
    ({"nodes": 2, "gpu": 0, "cpu_milli": 0, "mem_mib": 0}, "no capacity"),
])
def test_homogeneous_rejects(kwargs, needle):
    with pytest.raises(ClusterError, match=needle):
        Cluster.homogeneous(**kwargs)


def test_cluster_errors_are_user_errors():
    assert issubclass(ClusterError, FitgppError)
    with pytest.raises(ClusterError, match="no nodes"):
        Cluster(())
    with pytest.raises(ClusterError, match="'gpu'"):
        NodeGroup(1, -1, 0, 0, name="x")


@pytest.mark.parametrize("text", ["not json", "{}", "null"])
def test_from_json_rejects(text):
    with pytest.raises(ClusterError, match="cluster JSON"):
        Cluster.from_json(text)
