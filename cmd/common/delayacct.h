/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* kernel.task_delayacct, read and (at start, while privileged) written. */
#ifndef TSC_DELAYACCT_H
#define TSC_DELAYACCT_H

/* 1 on, 0 off, or -errno (-ENOENT: the kernel has no such sysctl). */
int tsc_delayacct_read(void);
/* Write 1 to the sysctl: 0 or -errno (-EPERM without CAP_SYS_ADMIN). */
int tsc_delayacct_enable(void);

#endif
