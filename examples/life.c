// life.c — Conway's Game of Life on a 24x12 torus: a glider and a blinker, printed at a few
// generations, with the population count at each step.
#include <stdio.h>
#include <string.h>

#define WIDTH 24
#define HEIGHT 12

static unsigned char grid[HEIGHT][WIDTH], next_grid[HEIGHT][WIDTH];

static int neighbours(int row, int column) {
    int count = 0;
    for (int dr = -1; dr <= 1; ++dr)
        for (int dc = -1; dc <= 1; ++dc)
            if (dr || dc) count += grid[(row + dr + HEIGHT) % HEIGHT][(column + dc + WIDTH) % WIDTH];
    return count;
}

static int step(void) {
    int population = 0;
    for (int r = 0; r < HEIGHT; ++r)
        for (int c = 0; c < WIDTH; ++c) {
            int n = neighbours(r, c);
            next_grid[r][c] = n == 3 || (n == 2 && grid[r][c]);
            population += next_grid[r][c];
        }
    memcpy(grid, next_grid, sizeof grid);
    return population;
}

static void show(int generation) {
    printf("generation %d:\n", generation);
    for (int r = 0; r < HEIGHT; ++r) {
        for (int c = 0; c < WIDTH; ++c) putchar(grid[r][c] ? '#' : '.');
        putchar('\n');
    }
}

int main(void) {
    const int glider[][2] = {{0, 1}, {1, 2}, {2, 0}, {2, 1}, {2, 2}};
    for (int i = 0; i < 5; ++i) grid[glider[i][0] + 1][glider[i][1] + 1] = 1;
    for (int c = 15; c < 18; ++c) grid[6][c] = 1;  // blinker
    show(0);
    printf("population:");
    for (int generation = 1; generation <= 24; ++generation) {
        printf(" %d", step());
        if (generation % 12 == 0) {
            printf("\n");
            show(generation);
            if (generation < 24) printf("population:");
        }
    }
    return 0;
}
