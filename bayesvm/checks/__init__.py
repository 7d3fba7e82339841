"""What both driver families check before a fit is returned: convergence of MCMC draws
(:mod:`~bayesvm.checks.convergence`), the modes that chains found
(:mod:`~bayesvm.checks.modes`) and the posterior mass of each (:mod:`~bayesvm.checks.mode_mass`),
and the Pareto k-hat of VB's ``q`` (:mod:`~bayesvm.checks.pareto`).

A floor of their own, below :mod:`bayesvm.samplers` and :mod:`bayesvm.vb`, which import them
and not each other.
"""
