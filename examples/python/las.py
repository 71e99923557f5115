"""las.py: least attained service as a Python policy, the rule of the C
plugin examples/policy-plugin/las.c (which says why), for hetbatch.sim.

Every round_s seconds the jobs that have arrived and not finished are
ordered by the GPU-seconds they have held (fewest first; ties by arrival,
then id) and selected while their GPUs fit in what is online; the others
are suspended, and selected jobs holding nothing start or resume.

    import hetbatch, las
    hetbatch.register_policy(las.LAS)
    hetbatch.sim("philly", trace="workload.csv", policies="las-py,tiresias")
"""
import hetbatch


class LAS(hetbatch.Policy):
    name = "las-py"
    summary = "LAS (Python): least attained GPU-seconds first, preemptive rounds; fixed GPUs and batch"
    agent = "fifo"  # each job keeps its requested GPUs and batch
    options = {"las-py-round": hetbatch.Knob(300.0, "the Python LAS's seconds between rounds (default 300)",
                                             min=1, max=86400, unit="s")}

    def __init__(self, sim):
        self.round_s = self.opts["las-py-round"]
        self.arrived = []  # jobs on_arrival saw, not by time: arrivals at a round's instant come after it

    def on_arrival(self, sim, job):
        if job.gpus > sim.cluster_gpus:
            raise ValueError("job %s asks for %d GPUs, the cluster has %d" % (job.name, job.gpus, sim.cluster_gpus))
        self.arrived.append(job)  # it waits for the next round

    def on_round(self, sim):
        live = [j for j in self.arrived if j.state not in (hetbatch.policy.DONE, hetbatch.policy.DROPPED)]
        self.arrived = live
        live.sort(key=lambda j: (j.attained_gpu_s, j.arrival_s, j.id))
        left, chosen = sim.online_gpus, []
        for j in live:
            if j.gpus <= left:
                left -= j.gpus
                chosen.append(j)
        picked = set(j.id for j in chosen)
        for j in live:  # suspend first, so the GPUs they free can be placed below
            if j.id not in picked and j.holds:
                sim.suspend(j)
        for j in chosen:
            if j.holds:
                continue
            grant = sim.place(j.gpus)
            if grant is None:
                raise RuntimeError("the GPUs selected for job %s are not free" % j.name)
            if j.state == hetbatch.policy.PENDING:
                sim.start(j, grant)
            else:
                sim.regrant(j, grant)

    def on_requeue(self, sim, job):
        pass  # a job suspended for a capacity withdrawal: the next round reconsiders it
