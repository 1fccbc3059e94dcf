/* The collectives gbasim times, as SMPI (SimGrid's MPI simulator) times them on a SimGrid
   platform file: `collectives OP SIZE...` runs MPI_Allreduce (OP allreduce: a rank's buffer
   of SIZE bytes of floats) or MPI_Alltoall (OP alltoall: SIZE / ranks bytes to every rank) at
   each size and prints "OP SIZE SECONDS", from the moment every rank starts to the moment the
   last ends. The ranks start together, as gbasim's collectives do: a barrier ends at different
   times on different ranks (on a torus or a dragonfly their routes differ by hops), so after
   it the ranks agree on a start a second after the latest of them and sleep until then (SMPI
   simulates the sleep). Used by tests/smpi_test.py. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  if (argc < 3 || (strcmp(argv[1], "allreduce") != 0 && strcmp(argv[1], "alltoall") != 0)) {
    if (rank == 0) fprintf(stderr, "usage: collectives allreduce|alltoall SIZE...\n");
    MPI_Finalize();
    return 2;
  }
  const int allreduce = strcmp(argv[1], "allreduce") == 0;
  for (int a = 2; a < argc; ++a) {
    const long bytes = atol(argv[a]);
    const int count = (int)(bytes / (long)sizeof(float));
    float* in = calloc((size_t)count, sizeof(float));
    float* out = calloc((size_t)count, sizeof(float));
    MPI_Barrier(MPI_COMM_WORLD);
    const double now = MPI_Wtime();
    double start = 0.0;
    MPI_Allreduce(&now, &start, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    start += 1.0;
    const double wait = start - MPI_Wtime();
    const struct timespec pause = {(time_t)wait, (long)((wait - (double)(time_t)wait) * 1e9)};
    nanosleep(&pause, NULL);
    if (allreduce)
      MPI_Allreduce(in, out, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    else
      MPI_Alltoall(in, count / ranks, MPI_FLOAT, out, count / ranks, MPI_FLOAT, MPI_COMM_WORLD);
    const double end = MPI_Wtime();
    double last_end = 0.0;
    MPI_Reduce(&end, &last_end, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("%s %ld %.9f\n", argv[1], bytes, last_end - start);
    free(in);
    free(out);
  }
  MPI_Finalize();
  return 0;
}
