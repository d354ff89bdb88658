#ifndef ORCHESTRATOR_CLIBPQ_SHIM_H
#define ORCHESTRATOR_CLIBPQ_SHIM_H
#include <libpq-fe.h>
#endif
