/*===- consumer.c - an external C program that embeds hetero -------------===*/

#include "hetero-c/Hetero.h"

#include <stdio.h>

int main(void) {
  MlirContext context = mlirContextCreate();
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  heteroRegisterAllDialects(registry);
  mlirContextAppendDialectRegistry(context, registry);
  mlirDialectRegistryDestroy(registry);
  mlirContextLoadAllAvailableDialects(context);
  MlirModule module = mlirModuleCreateParse(
      context, mlirStringRefCreateFromCString(
                   "hetero.plan_set @p for @q [@a] default @a"));
  /* The pipeline @q does not exist: the verifier rejects the module. */
  printf("consumer-c: rejected %d\n", mlirModuleIsNull(module));
  mlirContextDestroy(context);
  return 0;
}
