"""The engine installs on its own: the wheel built from this checkout brings one package and no
analyzer code, and fixed code's import works in a virtualenv that has nothing else."""

import subprocess
import venv
from pathlib import Path

import chatbound.compaction
import chatbound.version

ROOT = Path(__file__).resolve().parents[2]
FIXED_CODE = """
import warnings
warnings.simplefilter("error")
from chatbound.compaction import bounded_view
history = [{"role": "system", "content": "be brief"}]
for turn in range(30):
    history += [{"role": "user", "content": f"q{turn}"}, {"role": "assistant", "content": f"a{turn}"}]
view = bounded_view(history, last_turns=3)
print(len(view), view[0]["role"], view[-1]["content"])
"""


def _run(*command, cwd=None):
    return subprocess.run(command, capture_output=True, text=True, check=True, cwd=cwd).stdout


def test_the_engine_wheel_installs_alone_into_an_empty_virtualenv(engine_wheel, tmp_path):
    env = tmp_path / "env"
    venv.create(env, with_pip=True)
    python = str(env / "bin" / "python")
    _run(python, "-m", "pip", "install", "--quiet", "--no-index", str(engine_wheel))
    installed = _run(python, "-m", "pip", "list", "--format=freeze", "--exclude", "pip", "--exclude", "setuptools")
    assert installed.split() == [f"chatbound-compaction=={chatbound.compaction.__version__}"]
    # no analyzer module, no third-party package: the one import a fix adds runs, without warnings
    assert _run(python, "-c", FIXED_CODE, cwd=tmp_path).split() == ["7", "system", "a29"]
    assert [p.name for p in env.glob("lib/python*/site-packages/chatbound/*")] == ["compaction"]
    # the PostgreSQL store is an extra: asking for it without psycopg says what to install
    missing = subprocess.run(
        [python, "-c", "from chatbound.compaction import PostgresEventStore"], capture_output=True, text=True
    )
    assert "pip install 'chatbound-compaction[postgres]'" in missing.stderr.splitlines()[-1]


def test_the_analyzer_depends_on_this_very_engine():
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert f'"chatbound-compaction=={chatbound.compaction.__version__}"' in pyproject
    assert chatbound.version.__version__ == chatbound.compaction.__version__
