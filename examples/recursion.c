// recursion.c — recursive algorithms: Ackermann, Towers of Hanoi, naive Fibonacci, permutations
// and the N-queens puzzle by backtracking.
#include <stdio.h>
#include <string.h>

static unsigned ackermann(unsigned m, unsigned n) {
    if (m == 0) return n + 1;
    if (n == 0) return ackermann(m - 1, 1);
    return ackermann(m - 1, ackermann(m, n - 1));
}

static unsigned hanoi_moves;
static void hanoi(int disks, char from, char to, char via) {
    if (disks == 0) return;
    hanoi(disks - 1, from, via, to);
    if (++hanoi_moves <= 3) printf("  move disk %d from %c to %c\n", disks, from, to);
    hanoi(disks - 1, via, to, from);
}

static unsigned fibonacci(unsigned n) { return n < 2 ? n : fibonacci(n - 1) + fibonacci(n - 2); }

static int permutation_count;
static void permute(char* text, int start, int length) {
    if (start == length) {
        if (permutation_count++ < 6) printf(" %s", text);
        return;
    }
    for (int i = start; i < length; ++i) {
        char swap = text[start]; text[start] = text[i]; text[i] = swap;
        permute(text, start + 1, length);
        swap = text[start]; text[start] = text[i]; text[i] = swap;
    }
}

static int queens_solutions(int row, int size, unsigned columns, unsigned diagonals, unsigned anti_diagonals) {
    if (row == size) return 1;
    int solutions = 0;
    for (int column = 0; column < size; ++column) {
        unsigned c = 1u << column, d = 1u << (row + column), a = 1u << (row - column + size);
        if ((columns & c) || (diagonals & d) || (anti_diagonals & a)) continue;
        solutions += queens_solutions(row + 1, size, columns | c, diagonals | d, anti_diagonals | a);
    }
    return solutions;
}

int main(void) {
    printf("ackermann(2, 3) = %u, ackermann(3, 3) = %u\n", ackermann(2, 3), ackermann(3, 3));
    printf("towers of hanoi with 10 disks:\n");
    hanoi(10, 'A', 'C', 'B');
    printf("  ... %u moves in all\n", hanoi_moves);
    printf("fibonacci(18) = %u\n", fibonacci(18));
    char letters[] = "abcde";
    printf("permutations of %s:", letters);
    permute(letters, 0, (int)strlen(letters));
    printf(" ... %d in all\n", permutation_count);
    for (int size = 4; size <= 7; ++size) printf("%d queens: %d solutions\n", size, queens_solutions(0, size, 0, 0, 0));
    return 0;
}
