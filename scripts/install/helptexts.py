"""What the man page and the bash completion are generated from: the help
texts of a built `hetbatch` (`hetbatch --help`, `hetbatch SUB --help`), so
neither can drift from the options the binary takes.  Shared by gen-man.py
and gen-completion.py; run only at build time."""
import re
import subprocess


def run(exe, *args):
    r = subprocess.run([exe, *args], capture_output=True, text=True, env={'PATH': '/usr/bin:/bin', 'LC_ALL': 'C'})
    if r.returncode != 0:
        raise SystemExit('%s %s: exit %d\n%s' % (exe, ' '.join(args), r.returncode, r.stderr))
    return r.stdout


def subcommands(top):
    """[(name, summary)] from the "Subcommands:" block of `hetbatch --help`."""
    out, inside = [], False
    for line in top.splitlines():
        if line.startswith('Subcommands:'):
            inside = True
            continue
        if inside:
            m = re.match(r'  (\S+)\s+(.*)', line)
            if not m:
                break
            out.append((m.group(1), m.group(2)))
    if not out:
        raise SystemExit('no "Subcommands:" block in hetbatch --help')
    return out


def extra_helps(name, text):
    """Nested commands a help names as "(see its --help)", e.g. profile allreduce."""
    return sorted(set(re.findall(r'hetbatch %s ([a-z][a-z-]+) [^\n]*\(see its --help\)' % re.escape(name), text)))


OPT_LINE = re.compile(r'^\s{1,6}(?:-([a-zA-Z]), )?(--[a-z][a-z0-9-]*)(?:[ =](\S+))?')


def options(text):
    """{'--name': spec} for every option a help lists at the start of a line:
    spec None (a flag), its metavar ('FILE', 'N': takes a value) or
    ['a', 'b'] (one of these)."""
    opts = {}
    for line in text.splitlines():
        m = OPT_LINE.match(line)
        if not m:
            continue
        name, meta = m.group(2), m.group(3)
        if meta and re.fullmatch(r'[a-z0-9-]+(\|[a-z0-9-]+)+', meta):
            spec = meta.split('|')
        elif meta and re.match(r'[A-Z]', meta):
            spec = meta
        else:
            spec = None
        if m.group(1):
            opts['-' + m.group(1)] = spec
        if name not in opts or opts[name] is None:
            opts[name] = spec
    return opts


def policies(sim_help):
    """Policy names from the "Policies" block of `hetbatch sim --help`."""
    out, inside = [], False
    for line in sim_help.splitlines():
        if line.startswith('Policies'):
            inside = True
            continue
        if inside:
            m = re.match(r'  ([a-z][a-z0-9-]*)\s', line)
            if not m:
                break
            out.append(m.group(1))
    return out
